import assert from "node:assert/strict";
import { routedSecondOctets } from "./_subnets.ts";

const HEADER =
  "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT";

Deno.test("routedSecondOctets() takes the /16s a host route covers, not the default route", () => {
  const table = [
    HEADER,
    // default via eth0
    "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0",
    // 10.127.0.0/16 and 10.128.0.0/16 on leftover bridges
    "ktsconf-u3\t00007F0A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0",
    "ktsconf-o3\t0000800A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0",
    // 10.204.0.0/14 covers 10.204 to 10.207
    "wide\t0000CC0A\t00000000\t0001\t0\t0\t0\t0000FCFF\t0\t0\t0",
    // 192.0.2.0/24 is outside 10/8
    "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0",
    // 10.230.5.0/24 lies inside 10.230/16
    "br\t0005E60A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0",
  ].join("\n");
  assert.deepEqual(
    [...routedSecondOctets(table)].sort((a, b) => a - b),
    [127, 128, 204, 205, 206, 207, 230],
  );
});

Deno.test("routedSecondOctets() counts every /16 under a 10/8 route", () => {
  const table =
    `${HEADER}\nvpn\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0`;
  assert.equal(routedSecondOctets(table).size, 256);
});
