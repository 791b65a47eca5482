import assert from "node:assert/strict";
import type { Service, ServicePort } from "../../api/mod.ts";
import { makeEnvironment } from "./container_env.ts";
import { serviceEnvVars, serviceVariables } from "./service_env.ts";
import type { Pod } from "../types.ts";

function svc(
  namespace: string,
  name: string,
  clusterIP: string,
  ports: ServicePort[] = [{ port: 80 }],
): Service {
  return { metadata: { namespace, name }, spec: { clusterIP, ports } };
}

Deno.test("serviceVariables() gives upstream's names and values, first port twice", () => {
  const vars = serviceVariables(
    svc("ns", "foo-svc", "10.0.0.11", [
      { name: "http", port: 8765, protocol: "TCP" },
      { name: "dns-udp", port: 53, protocol: "UDP" },
    ]),
  );
  assert.deepEqual(vars, [
    ["FOO_SVC_SERVICE_HOST", "10.0.0.11"],
    ["FOO_SVC_SERVICE_PORT", "8765"],
    ["FOO_SVC_SERVICE_PORT_HTTP", "8765"],
    ["FOO_SVC_SERVICE_PORT_DNS_UDP", "53"],
    ["FOO_SVC_PORT", "tcp://10.0.0.11:8765"],
    ["FOO_SVC_PORT_8765_TCP", "tcp://10.0.0.11:8765"],
    ["FOO_SVC_PORT_8765_TCP_PROTO", "tcp"],
    ["FOO_SVC_PORT_8765_TCP_PORT", "8765"],
    ["FOO_SVC_PORT_8765_TCP_ADDR", "10.0.0.11"],
    ["FOO_SVC_PORT_53_UDP", "udp://10.0.0.11:53"],
    ["FOO_SVC_PORT_53_UDP_PROTO", "udp"],
    ["FOO_SVC_PORT_53_UDP_PORT", "53"],
    ["FOO_SVC_PORT_53_UDP_ADDR", "10.0.0.11"],
  ]);
  // an unnamed port has no _SERVICE_PORT_<NAME>; no protocol is TCP; IPv6 in brackets
  const v6 = new Map(serviceVariables(svc("ns", "b", "fd00::1")));
  assert.equal(v6.get("B_PORT"), "tcp://[fd00::1]:80");
  assert.equal(
    [...v6.keys()].filter((k) => k.startsWith("B_SERVICE_PORT_")).length,
    0,
  );
});

Deno.test("serviceEnvVars() takes the pod's namespace with service links and always default/kubernetes", () => {
  const services = [
    svc("default", "kubernetes", "10.0.0.1", [{ name: "https", port: 443 }]),
    svc("default", "other", "10.0.0.2"),
    svc("team", "foo", "10.0.0.3"),
    svc("team", "headless", "None"),
    svc("team", "pending", ""),
    svc("elsewhere", "bar", "10.0.0.4"),
  ];
  const linked = serviceEnvVars(services, "team", true);
  assert.equal(linked.get("KUBERNETES_SERVICE_HOST"), "10.0.0.1");
  assert.equal(linked.get("KUBERNETES_SERVICE_PORT"), "443");
  assert.equal(linked.get("KUBERNETES_SERVICE_PORT_HTTPS"), "443");
  assert.equal(linked.get("FOO_SERVICE_HOST"), "10.0.0.3");
  for (const gone of ["OTHER", "HEADLESS", "PENDING", "BAR"]) {
    assert.equal(linked.has(`${gone}_SERVICE_HOST`), false, gone);
  }
  const unlinked = serviceEnvVars(services, "team", false);
  assert.deepEqual(
    [...unlinked.keys()].filter((k) => k.endsWith("_SERVICE_HOST")),
    ["KUBERNETES_SERVICE_HOST"],
  );
  // the pod's own namespace's "kubernetes" Service wins over default's
  const shadowed = serviceEnvVars(
    [...services, svc("team", "kubernetes", "10.9.9.9")],
    "team",
    true,
  );
  assert.equal(shadowed.get("KUBERNETES_SERVICE_HOST"), "10.9.9.9");
  // a pod in default sees default's Services
  assert.equal(
    serviceEnvVars(services, "default", true).get("OTHER_SERVICE_HOST"),
    "10.0.0.2",
  );
});

Deno.test("makeEnvironment(): the container's env wins over service vars and may reference them", () => {
  const pod: Pod = {
    metadata: { name: "p", namespace: "team" },
    spec: {
      containers: [{
        name: "c",
        env: [
          { name: "FOO_SERVICE_PORT", value: "mine" },
          {
            name: "URL",
            value: "http://$(FOO_SERVICE_HOST):$(FOO_SERVICE_PORT)",
          },
        ],
      }],
    },
  };
  const env = makeEnvironment(pod, pod.spec.containers[0]!, {
    nodeName: "n",
    services: new Map([
      ["FOO_SERVICE_HOST", "10.0.0.3"],
      ["FOO_SERVICE_PORT", "80"],
    ]),
  });
  assert.deepEqual(env, [
    { key: "FOO_SERVICE_PORT", value: "mine" },
    { key: "URL", value: "http://10.0.0.3:mine" },
    { key: "FOO_SERVICE_HOST", value: "10.0.0.3" },
  ]);
});
