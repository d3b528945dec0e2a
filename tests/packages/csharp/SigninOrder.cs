// A user's program against the installed NuGet package (tests/packages/run.sh):
//   nuget install Perps -Source dist; mcs -r:packages/Perps.<v>/lib/net45/Perps.dll SigninOrder.cs
// Signs in with a published test key (Hardhat account #0) and places an order on the venue
// at BASE_URL / PERPS_URL. Prints which libperps the process mapped (/proc/self/maps).
//
//   mono SigninOrder.exe BASE_URL PERPS_URL
using System;
using System.IO;
using System.Linq;
using Perps;

static class SigninOrder
{
    const string WalletKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    const string OrderJson = "{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\","
        + "\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

    static int Main(string[] args)
    {
        Console.WriteLine("perps " + Library.Version + " loaded from "
            + File.ReadLines("/proc/self/maps").Where(l => l.Contains("libperps")).Select(l => l.Split(' ').Last()).First());
        using (var client = new Client(args[0], args[1]))
        using (var session = new Session())
        {
            client.Signin(session, "bsc", WalletKey, 3600);
            Console.WriteLine("order placed: " + client.NewOrder(session, OrderJson));
        }
        return 0;
    }
}
