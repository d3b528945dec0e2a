// A user's program against the installed jar (tests/packages/run.sh):
//   javac -cp perps-<v>.jar:jna.jar SigninOrder.java; java -cp perps-<v>.jar:jna.jar:. SigninOrder ...
// (no -Djna.library.path: JNA finds linux-x86-64/libperps.so inside the jar). Signs in with a
// published test key (Hardhat account #0) and places an order on the venue at the URLs given.
//
//   java SigninOrder BASE_URL PERPS_URL
import perps.Client;
import perps.Perps;
import perps.Session;

public final class SigninOrder {
    private static final String WALLET_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    private static final String ORDER = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\","
        + "\"qty\":\"0.01\",\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

    public static void main(String[] args) {
        System.out.println("perps " + Perps.version());
        try (Client client = new Client(args[0], args[1]); Session session = new Session()) {
            client.signin(session, "bsc", WALLET_KEY, 3600);
            System.out.println("order placed: " + client.newOrder(session, ORDER));
        }
    }
}
