import assert from "node:assert/strict";
import { parseNetDev, readHostNetwork } from "./host_network.ts";

const NET_DEV =
  `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 2723 224 0 2 0 0 0 0 2723 224 0 0 0 0 0 0
  eth0: 1824214533 900 3 0 0 0 0 0 29433927 800 4 0 0 0 0 0
vethab12: 5 1 0 0 0 0 0 0 6 1 0 0 0 0 0 0
docker0: 5 1 0 0 0 0 0 0 6 1 0 0 0 0 0 0
 cni0: 100 2 0 0 0 0 0 0 200 3 1 0 0 0 0 0
`;

Deno.test("/proc/net/dev gives bytes and errors each way, without lo, veth and docker", () => {
  assert.deepEqual(parseNetDev(NET_DEV), [
    {
      name: "eth0",
      rxBytes: 1824214533,
      rxErrors: 3,
      txBytes: 29433927,
      txErrors: 4,
    },
    { name: "cni0", rxBytes: 100, rxErrors: 0, txBytes: 200, txErrors: 1 },
  ]);
});

Deno.test("a short or garbled line is skipped", () => {
  assert.deepEqual(
    parseNetDev("eth1: 1 2 3\nbad: a b c d e f g h i j k l m n o p\n"),
    [],
  );
});

Deno.test("an unreadable /proc/net/dev leaves the network out", async () => {
  const fs = {
    readTextFile: () => Promise.reject(new Deno.errors.PermissionDenied("no")),
  };
  assert.equal(await readHostNetwork(fs, () => 0), undefined);
  const ok = { readTextFile: () => Promise.resolve(NET_DEV) };
  assert.equal((await readHostNetwork(ok, () => 7))?.timeMs, 7);
});
