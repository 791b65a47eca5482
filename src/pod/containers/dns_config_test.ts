import assert from "node:assert/strict";
import { dnsConfigForPod, parseResolvConf } from "./dns_config.ts";
import type { Pod } from "../types.ts";

function pod(spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "u-1" },
    spec: { containers: [{ name: "app" }], ...spec },
  };
}

const HOST = parseResolvConf(
  "# c\nnameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch a.local. b.local .\noptions ndots:2 edns0\n",
);

Deno.test("parseResolvConf() reads resolv.conf like upstream parseResolvConf", () => {
  assert.deepEqual(HOST, {
    servers: ["1.1.1.1", "8.8.8.8"],
    searches: ["a.local", "b.local"],
    options: ["ndots:2", "edns0"],
  });
  // the last search and options lines win; "domain" is not read
  assert.deepEqual(
    parseResolvConf(
      "search x\nsearch y z\noptions a\noptions b\ndomain d\nnameserver\n",
    ),
    { servers: [], searches: ["y", "z"], options: ["b"] },
  );
});

Deno.test("dnsConfigForPod() falls back to the host resolv.conf without cluster DNS", () => {
  assert.deepEqual(dnsConfigForPod(pod(), { host: HOST }), HOST);
  assert.deepEqual(
    dnsConfigForPod(pod({ dnsPolicy: "Default" }), {
      host: HOST,
      clusterDNS: ["10.96.0.10"],
    }),
    HOST,
  );
});

Deno.test("dnsConfigForPod() builds the cluster search path for ClusterFirst", () => {
  assert.deepEqual(
    dnsConfigForPod(pod(), {
      clusterDNS: ["10.96.0.10"],
      clusterDomain: "cluster.local",
      host: HOST,
    }),
    {
      servers: ["10.96.0.10"],
      searches: [
        "prod.svc.cluster.local",
        "svc.cluster.local",
        "cluster.local",
        "a.local",
        "b.local",
      ],
      options: ["ndots:5"],
    },
  );
  // host network: ClusterFirst means the host's, ClusterFirstWithHostNet the cluster's
  assert.deepEqual(
    dnsConfigForPod(pod({ hostNetwork: true }), {
      clusterDNS: ["10.96.0.10"],
      host: HOST,
    }),
    HOST,
  );
  assert.deepEqual(
    dnsConfigForPod(
      pod({ hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" }),
      {
        clusterDNS: ["10.96.0.10"],
        host: HOST,
      },
    ).servers,
    ["10.96.0.10"],
  );
});

Deno.test("dnsConfigForPod() uses the local resolver when resolvConf is empty", () => {
  assert.deepEqual(dnsConfigForPod(pod(), {}), {
    servers: ["127.0.0.1"],
    searches: ["."],
    options: [],
  });
  assert.deepEqual(
    dnsConfigForPod(pod(), { nodeIPs: ["10.0.0.1", "fd00::1"] }).servers,
    [
      "127.0.0.1",
      "::1",
    ],
  );
});

Deno.test("dnsConfigForPod() honours policy None with spec.dnsConfig and the limits", () => {
  const p = pod({
    dnsPolicy: "None",
    dnsConfig: {
      nameservers: ["9.9.9.9"],
      options: [{ name: "ndots", value: "1" }, { name: "rotate" }],
    },
  });
  assert.deepEqual(
    dnsConfigForPod(p, { clusterDNS: ["10.96.0.10"], host: HOST }),
    {
      servers: ["9.9.9.9"],
      searches: [],
      options: ["ndots:1", "rotate"],
    },
  );
  const many = pod({
    dnsConfig: {
      nameservers: ["1.0.0.1", "1.0.0.2", "1.0.0.3"],
      searches: Array.from({ length: 40 }, (_, i) => `s${i}.example`),
      options: [{ name: "ndots", value: "3" }],
    },
  });
  const got = dnsConfigForPod(many, { host: HOST });
  assert.deepEqual(got.servers, ["1.1.1.1", "8.8.8.8", "1.0.0.1"]);
  assert.equal(got.searches.length, 32);
  assert.deepEqual(got.options, ["ndots:3", "edns0"]);
});
