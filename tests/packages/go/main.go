// A user's program against the installed library (tests/packages/run.sh): its own module,
// which uses the Go binding through a go.work file (`go work init . <path to bindings/go>`),
// without a replace; cgo finds the library with pkg-config. Signs in with a published test
// key (Hardhat account #0) and places an order on the venue at the URLs given.
//
//	signin_order BASE_URL PERPS_URL
package main

import (
	"fmt"
	"os"

	perps "libperps/bindings/go"
)

const (
	walletKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	order     = `{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}`
)

func run(baseURL, perpsURL string) error {
	client, err := perps.NewClient(baseURL, perpsURL, "")
	if err != nil {
		return err
	}
	defer client.Close()
	session, err := perps.NewSession()
	if err != nil {
		return err
	}
	defer session.Close()
	if _, err := client.Signin(session, "bsc", walletKey, 3600); err != nil {
		return err
	}
	answer, err := client.NewOrder(session, order)
	if err != nil {
		return err
	}
	fmt.Println("order placed:", answer)
	return nil
}

func main() {
	fmt.Println("perps", perps.Version())
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
