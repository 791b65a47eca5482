import assert from "node:assert/strict";
import {
  CRI_URL_GRANT,
  PermissionPlanError,
  planPermissions,
  STANDARD_LAYOUT,
  standardPlan,
  STREAMING_SERVER_GRANT,
} from "./mod.ts";

const noFile = () => undefined;

Deno.test("planPermissions() applies upstream defaults to an empty config", async () => {
  const plan = await planPermissions({ config: {}, flags: {} }, {
    readFile: noFile,
  });
  assert.deepEqual(plan.read, [
    // the node's registry logins outside the root dir
    "/.docker/config.json",
    "/.dockercfg",
    "/etc/hosts",
    // the kubelet user, for pod user namespaces
    "/etc/passwd",
    "/etc/resolv.conf",
    "/run/containerd/containerd.sock",
    "/run/kubelet.ts/memory",
    "/var/lib/kubelet",
    // the kubelet API's /logs/ reads the node's log directory (covers the pod logs)
    "/var/log",
  ]);
  assert.deepEqual(plan.write, [
    "/run/containerd/containerd.sock",
    "/run/kubelet.ts/memory",
    "/var/lib/kubelet",
    "/var/log/containers",
    "/var/log/pods",
  ]);
  assert.deepEqual(plan.net, [
    "0.0.0.0:10250",
    "127.0.0.1",
    "127.0.0.1:10248",
    "cri.invalid:80",
    "unix:/run/containerd/containerd.sock",
    "unix:/var/lib/kubelet/cgroup-agent.sock",
    "unix:/var/lib/kubelet/device-plugins/kubelet.sock",
  ]);
  assert.deepEqual(plan.env, [
    "BUF_BIGINT_DISABLE",
    "LOG_STREAM",
    "LOG_TOKENS",
  ]);
  assert.deepEqual(plan.sys, [
    "hostname",
    "osRelease",
    "statfs",
    "systemMemoryInfo",
  ]);
  for (const forbidden of ["all", "run", "ffi"]) {
    assert.ok(!plan.grants.some((g) => (g.name as string) === forbidden));
  }
});

Deno.test("planPermissions() reads /var/log only while /logs/ is served", async () => {
  for (
    const config of [
      { enableSystemLogHandler: false },
      { enableDebuggingHandlers: false },
      { port: 0 },
    ]
  ) {
    const plan = await planPermissions({ config, flags: {} }, {
      readFile: noFile,
    });
    const what = JSON.stringify(config);
    assert.ok(!plan.read.includes("/var/log"), what);
    assert.ok(plan.read.includes("/var/log/pods"), what);
  }
});

Deno.test("planPermissions() grants the kubelet API's needs only with enableServer", async () => {
  const server = {
    tlsCertFile: "/etc/kubelet/tls.crt",
    tlsPrivateKeyFile: "/etc/kubelet/tls.key",
    authentication: { x509: { clientCAFile: "/etc/kubelet/ca.crt" } },
    readOnlyPort: 10255,
  };
  const on = await planPermissions({ config: server, flags: {} }, {
    readFile: noFile,
  });
  const off = await planPermissions({
    config: { ...server, enableServer: false },
    flags: {},
  }, { readFile: noFile });
  const serverOnly = {
    read: [
      "/etc/kubelet/ca.crt",
      "/etc/kubelet/tls.crt",
      "/etc/kubelet/tls.key",
      "/var/log",
    ],
    net: ["0.0.0.0:10250", "0.0.0.0:10255", STREAMING_SERVER_GRANT],
  };
  for (const kind of ["read", "net"] as const) {
    for (const grant of serverOnly[kind]) {
      assert.ok(on[kind].includes(grant), `enabled: ${kind} ${grant}`);
      assert.ok(!off[kind].includes(grant), `disabled: ${kind} ${grant}`);
    }
  }
  // What the node agent needs without its API stays.
  assert.deepEqual(
    on.write.filter((w) => !off.write.includes(w)),
    [],
  );
  assert.ok(off.net.includes("127.0.0.1:10248"), "healthz is not the API");
  assert.ok(off.read.includes("/var/log/pods"));
});

Deno.test("planPermissions() keeps socket paths exactly as configured", async () => {
  const plan = await planPermissions({
    config: {
      containerRuntimeEndpoint: "unix:///var/run/containerd/containerd.sock",
      imageServiceEndpoint: "unix:///run/images//img.sock",
    },
    flags: {},
  }, { readFile: noFile });
  assert.ok(plan.net.includes("unix:/var/run/containerd/containerd.sock"));
  assert.ok(plan.net.includes("unix:/run/images//img.sock"));
  assert.ok(!plan.net.includes("unix:/run/containerd/containerd.sock"));
  assert.ok(plan.read.includes("/var/run/containerd/containerd.sock"));
  assert.ok(plan.write.includes("/run/images//img.sock"));
});

Deno.test("planPermissions() grants nothing for the sim:// runtime", async () => {
  const plan = await planPermissions({
    config: { containerRuntimeEndpoint: "sim://local" },
    flags: { rootDir: "/tmp/r" },
  }, { readFile: noFile });
  assert.ok(!plan.net.some((n) => n.startsWith("unix:")));
  assert.deepEqual(plan.write, [
    "/run/kubelet.ts/memory",
    "/tmp/r",
    "/var/log/containers",
    "/var/log/pods",
  ]);
});

Deno.test("planPermissions() grants upstream's fixed device plugin folder whatever the root dir", async () => {
  const plan = await planPermissions({
    config: {},
    flags: { rootDir: "/srv/k" },
  }, {
    readFile: noFile,
  });
  assert.ok(plan.read.includes("/var/lib/kubelet/device-plugins"));
  assert.ok(plan.write.includes("/var/lib/kubelet/device-plugins"));
  assert.ok(
    plan.net.includes("unix:/var/lib/kubelet/device-plugins/kubelet.sock"),
  );
});

Deno.test("planPermissions() rejects non-unix endpoints naming the field", async () => {
  await assert.rejects(
    async () =>
      await planPermissions({
        config: { imageServiceEndpoint: "tcp://10.0.0.1:1234" },
        flags: {},
      }, { readFile: noFile }),
    (error: unknown) =>
      error instanceof PermissionPlanError &&
      error.field === "imageServiceEndpoint" &&
      error.message.includes("unix://"),
  );
  await assert.rejects(
    async () =>
      await planPermissions({
        config: { containerRuntimeEndpoint: "unix://@abstract" },
        flags: {},
      }, { readFile: noFile }),
    PermissionPlanError,
  );
});

Deno.test("planPermissions() derives listeners from address and ports", async () => {
  const plan = await planPermissions({
    config: {
      address: "::",
      port: 11250,
      readOnlyPort: 10255,
      healthzBindAddress: "10.1.2.3",
      healthzPort: 0,
    },
    flags: {},
  }, { readFile: noFile });
  const tcp = plan.net.filter((n) =>
    !n.startsWith("unix:") && n !== CRI_URL_GRANT
  );
  assert.deepEqual(tcp, ["127.0.0.1", "[::]:10255", "[::]:11250"]);
});

Deno.test("planPermissions() grants the loopback streaming server only for a real runtime with the API on", async () => {
  const net = async (config: Record<string, unknown>) =>
    (await planPermissions({ config, flags: {} }, { readFile: noFile })).net;
  assert.ok((await net({})).includes(STREAMING_SERVER_GRANT));
  assert.ok(
    !(await net({ containerRuntimeEndpoint: "sim://" })).includes(
      STREAMING_SERVER_GRANT,
    ),
  );
  assert.ok(!(await net({ port: 0 })).includes(STREAMING_SERVER_GRANT));
});

Deno.test("planPermissions() resolves config-relative paths against the config file", async () => {
  const plan = await planPermissions({
    config: { staticPodPath: "manifests/", podLogsDir: "/logs/" },
    flags: { config: "/etc/kts/config.yaml", rootDir: "/srv/kubelet" },
  }, { readFile: noFile });
  assert.ok(plan.read.includes("/etc/kts/manifests"));
  assert.ok(plan.read.includes("/etc/kts/config.yaml"));
  assert.ok(plan.write.includes("/logs"));
  assert.ok(plan.write.includes("/srv/kubelet"));
  // the container log links stay in upstream's directory whatever podLogsDir is
  assert.ok(plan.write.includes("/var/log/containers"));
});

Deno.test("planPermissions() makes relative flag paths absolute with cwd", async () => {
  const plan = await planPermissions({
    config: {},
    flags: { rootDir: "state", config: "kc.yaml" },
  }, { readFile: noFile, cwd: "/build" });
  assert.ok(plan.write.includes("/build/state"));
  assert.ok(plan.read.includes("/build/kc.yaml"));
});

Deno.test("planPermissions() drops paths covered by a granted directory", async () => {
  const plan = await planPermissions({
    config: {
      staticPodPath: "/var/lib/kubelet/manifests",
      tlsCertFile: "/var/lib/kubelet/pki/kubelet.crt",
      podLogsDir: "/var/lib/kubelet-logs",
    },
    flags: { certDir: "/var/lib/kubelet/pki" },
  }, { readFile: noFile });
  assert.deepEqual(
    plan.read.filter((p) => p.startsWith("/var/lib")),
    ["/var/lib/kubelet", "/var/lib/kubelet-logs"],
  );
  assert.deepEqual(plan.write, [
    "/run/containerd/containerd.sock",
    "/run/kubelet.ts/memory",
    "/var/lib/kubelet",
    "/var/lib/kubelet-logs",
    "/var/log/containers",
  ]);
  for (const grant of plan.grants) {
    assert.ok(plan[grant.name].includes(grant.value), grant.value);
  }
});

Deno.test("planPermissions() adds the API server and credentials from a readable kubeconfig", async () => {
  const kubeconfig = [
    "apiVersion: v1",
    "kind: Config",
    "current-context: main",
    "clusters:",
    "- name: c1",
    "  cluster: {server: 'https://api.example.com:6443', certificate-authority: pki/ca.crt}",
    "- name: other",
    "  cluster: {server: 'https://other.example.com'}",
    "contexts:",
    "- name: main",
    "  context: {cluster: c1, user: u1}",
    "users:",
    "- name: u1",
    "  user: {client-certificate: /var/lib/kubelet/pki/c.pem, client-key: /keys/k.pem}",
  ].join("\n");
  const files: Record<string, string> = { "/etc/k/kubelet.conf": kubeconfig };
  const plan = await planPermissions({
    config: {},
    flags: { kubeconfig: "/etc/k/kubelet.conf" },
  }, { readFile: (p) => files[p] });
  assert.ok(plan.net.includes("api.example.com:6443"));
  assert.ok(!plan.net.some((n) => n.startsWith("other.example.com")));
  assert.ok(plan.read.includes("/etc/k/pki/ca.crt"));
  assert.ok(plan.read.includes("/keys/k.pem"));
  assert.ok(plan.read.includes("/etc/k/kubelet.conf"));
  assert.ok(!plan.write.includes("/etc/k/kubelet.conf"));
});

Deno.test("planPermissions() grants --allow-run for exactly the kubeconfig's exec plugin, and none without one", async () => {
  const kubeconfig = (user: string) =>
    [
      "current-context: main",
      "clusters: [{name: c1, cluster: {server: 'https://api.example.com:6443'}}]",
      "contexts: [{name: main, context: {cluster: c1, user: u1}}]",
      `users: [{name: u1, user: ${user}}]`,
    ].join("\n");
  const plan = (user: string) =>
    planPermissions({
      config: {},
      flags: { kubeconfig: "/etc/k/kubelet.conf" },
    }, {
      readFile: (p) =>
        p === "/etc/k/kubelet.conf" ? kubeconfig(user) : undefined,
    });
  const exec = await plan(
    "{exec: {command: bin/token-plugin, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}",
  );
  assert.deepEqual(exec.run, ["/etc/k/bin/token-plugin"]);
  assert.ok(
    exec.grants.some((g) =>
      g.name === "run" && g.reason === "--kubeconfig exec credential plugin"
    ),
  );
  assert.deepEqual((await plan("{token: abc}")).run, []);
  assert.deepEqual((await planPermissions({ config: {}, flags: {} })).run, []);
});

Deno.test("planPermissions() lets TLS bootstrap write the kubeconfig", async () => {
  const plan = await planPermissions({
    config: {},
    flags: {
      kubeconfig: "/etc/k/kubelet.conf",
      bootstrapKubeconfig: "/etc/k/bootstrap.conf",
    },
  }, {
    readFile: (p) =>
      p === "/etc/k/bootstrap.conf"
        ? "clusters: [{name: a, cluster: {server: 'https://[fd00::1]'}}]"
        : undefined,
  });
  assert.ok(plan.write.includes("/etc/k/kubelet.conf"));
  assert.ok(plan.read.includes("/etc/k/bootstrap.conf"));
  assert.ok(plan.net.includes("[fd00::1]:443"));
});

Deno.test("planPermissions() turns staticPodURL into host:port", async () => {
  const plan = await planPermissions({
    config: { staticPodURL: "http://pods.local/list" },
    flags: {},
  }, { readFile: noFile });
  assert.ok(plan.net.includes("pods.local:80"));
  await assert.rejects(
    async () =>
      await planPermissions({ config: { staticPodURL: "::nope" }, flags: {} }, {
        readFile: noFile,
      }),
    /staticPodURL/,
  );
});

Deno.test("standardPlan() covers the kubeadm layout and no more", async () => {
  const plan = await standardPlan();
  assert.deepEqual(plan.write, [
    "/etc/kubernetes/kubelet.conf",
    "/etc/kubernetes/kubelet.conf.tmp",
    "/run/containerd/containerd.sock",
    "/run/kubelet.ts/memory",
    "/var/lib/kubelet",
    "/var/log/containers",
    "/var/log/pods",
  ]);
  assert.ok(plan.read.includes("/etc/kubernetes/manifests"));
  assert.ok(plan.read.includes("/etc/kubernetes/pki/ca.crt"));
  assert.ok(!plan.read.includes("/etc"));
  // Node status (API server mode) reads the machine ID and the OS image.
  assert.ok(plan.read.includes("/etc/machine-id"));
  assert.ok(plan.read.includes("/etc/os-release"));
  // The bootstrapped kubeconfig is written to "<kubeconfig>.tmp", then renamed.
  assert.ok(plan.read.includes("/etc/kubernetes/kubelet.conf.tmp"));
  assert.deepEqual(plan.net, [
    "0.0.0.0:10250",
    "127.0.0.1",
    "127.0.0.1:10248",
    "cri.invalid:80",
    "unix:/run/containerd/containerd.sock",
    "unix:/var/lib/kubelet/cgroup-agent.sock",
    "unix:/var/lib/kubelet/device-plugins/kubelet.sock",
  ]);
  const withApi = await standardPlan({ extraNet: ["10.0.0.1:6443"] });
  assert.ok(withApi.net.includes("10.0.0.1:6443"));
  assert.equal(STANDARD_LAYOUT.flags.rootDir, "/var/lib/kubelet");
});

Deno.test("planPermissions() grants sys names only for the features in use", async () => {
  const standalone = await planPermissions({
    config: {},
    flags: { hostnameOverride: "node-1" },
  }, { readFile: noFile });
  assert.deepEqual(standalone.sys, [
    "osRelease",
    "statfs",
    "systemMemoryInfo",
  ]);
  const connected = await planPermissions({
    config: {},
    flags: { kubeconfig: "/etc/k/kubelet.conf" },
  }, { readFile: noFile });
  assert.deepEqual(connected.sys, [
    "hostname",
    "networkInterfaces",
    "osRelease",
    "statfs",
    "systemMemoryInfo",
  ]);
  for (const name of connected.sys) {
    assert.ok(
      connected.grants.some((g) =>
        g.name === "sys" && g.value === name && g.reason.length > 0
      ),
    );
  }
});

Deno.test("planPermissions() grants read on --config-dir, resolved against cwd, and nothing else for it", async () => {
  const plan = await planPermissions({
    config: {},
    flags: { configDir: "kubelet.conf.d" },
  }, { readFile: noFile, cwd: "/etc/kubernetes" });
  assert.deepEqual(
    plan.grants.filter((g) => g.reason === "--config-dir"),
    [{
      name: "read",
      value: "/etc/kubernetes/kubelet.conf.d",
      reason: "--config-dir",
    }],
  );
  assert.ok(plan.read.includes("/etc/kubernetes/kubelet.conf.d"));
  assert.ok(!plan.write.includes("/etc/kubernetes/kubelet.conf.d"));
});

Deno.test("planPermissions() runs exactly the credential plugins the provider config names, from a file or a directory", async () => {
  const provider = (name: string) => ({
    name,
    apiVersion: "credentialprovider.kubelet.k8s.io/v1",
    matchImages: ["registry.example"],
    defaultCacheDuration: "1m",
  });
  const config = (...names: string[]) =>
    JSON.stringify({
      apiVersion: "kubelet.config.k8s.io/v1",
      kind: "CredentialProviderConfig",
      providers: names.map(provider),
    });
  const files: Record<string, string> = {
    "/etc/kp.json": config("ecr-login", "local-login"),
    "/etc/kp.d/a.yaml": config("a"),
    "/etc/kp.d/b.json": config("b"),
  };
  const plan = (path: string, binDir = "/usr/libexec/kp/") =>
    planPermissions({
      config: {},
      flags: {
        imageCredentialProviderConfig: path,
        imageCredentialProviderBinDir: binDir,
      },
    }, {
      readFile: (p) => files[p],
      listDir: (p) => p === "/etc/kp.d" ? ["b.json", "a.yaml"] : undefined,
    });
  const file = await plan("/etc/kp.json");
  assert.deepEqual(file.run, [
    "/usr/libexec/kp/ecr-login",
    "/usr/libexec/kp/local-login",
  ]);
  assert.ok(file.read.includes("/etc/kp.json"));
  assert.ok(file.read.includes("/usr/libexec/kp"));
  assert.deepEqual((await plan("/etc/kp.d")).run, [
    "/usr/libexec/kp/a",
    "/usr/libexec/kp/b",
  ]);
  // a config the kubelet will refuse grants no plugin
  files["/etc/kp.json"] = config("../escape");
  assert.deepEqual((await plan("/etc/kp.json")).run, []);
  const none = await planPermissions({ config: {}, flags: {} }, {
    readFile: noFile,
  });
  assert.deepEqual(none.run, []);
});

Deno.test("planPermissions() grants a named CSI driver's registration and CSI sockets, and refuses a bad name", async () => {
  const plan = await planPermissions({
    config: {},
    flags: { rootDir: "/srv/kubelet" },
  }, { readFile: noFile, csiDrivers: ["hostpath.csi.k8s.io"] });
  assert.ok(
    plan.net.includes(
      "unix:/srv/kubelet/plugins_registry/hostpath.csi.k8s.io-reg.sock",
    ),
  );
  assert.ok(
    plan.net.includes("unix:/srv/kubelet/plugins/hostpath.csi.k8s.io/csi.sock"),
  );
  // the sockets' read and write come with the root dir's grants
  assert.ok(plan.read.includes("/srv/kubelet"));
  assert.ok(plan.write.includes("/srv/kubelet"));
  await assert.rejects(
    planPermissions({ config: {}, flags: {} }, {
      readFile: noFile,
      csiDrivers: ["../x"],
    }),
    /--csi-driver.*not a CSI driver name/,
  );
});

Deno.test("planPermissions() grants the device plugin sockets named by --device-plugin-socket", async () => {
  const plan = await planPermissions({ config: {}, flags: {} }, {
    readFile: noFile,
    devicePluginSockets: ["gpu.sock"],
  });
  assert.ok(plan.net.includes("unix:/var/lib/kubelet/device-plugins/gpu.sock"));
  await assert.rejects(
    planPermissions({ config: {}, flags: {} }, {
      readFile: noFile,
      devicePluginSockets: ["../x.sock"],
    }),
    /--device-plugin-socket.*not a socket file name in \/var\/lib\/kubelet\/device-plugins/,
  );
});

Deno.test("planPermissions() grants getsubids only when the build names it, as an exact command", async () => {
  const plain = await planPermissions({ flags: {}, config: {} }, {
    readFile: noFile,
  });
  assert.deepEqual(plain.run, []);
  assert.ok(plain.read.includes("/etc/passwd"));
  const withTool = await planPermissions({ flags: {}, config: {} }, {
    readFile: noFile,
    getsubids: "/usr/bin/getsubids",
  });
  assert.deepEqual(withTool.run, ["/usr/bin/getsubids"]);
  assert.ok(withTool.read.includes("/usr/bin/getsubids"));
  for (const bad of ["getsubids", "/usr/bin/../bin/getsubids", "/usr/bin/"]) {
    await assert.rejects(
      planPermissions({ flags: {}, config: {} }, {
        readFile: noFile,
        getsubids: bad,
      }),
      (e: Error) =>
        e instanceof PermissionPlanError && e.message.includes("--getsubids") &&
        e.message.includes("/usr/bin/getsubids"),
    );
  }
});

Deno.test("planPermissions() grants the host directories named by --host-path, never /", async () => {
  const plan = await planPermissions({ config: {}, flags: {} }, {
    readFile: noFile,
    hostPaths: ["/mnt/disks"],
  });
  assert.ok(plan.read.includes("/mnt/disks"));
  assert.ok(plan.write.includes("/mnt/disks"));
  const plain = await planPermissions({ config: {}, flags: {} }, {
    readFile: noFile,
  });
  assert.ok(!plain.read.includes("/mnt/disks"));
  for (const bad of ["/", "mnt/disks", "/mnt/../etc", "/mnt/disks/"]) {
    await assert.rejects(
      planPermissions({ config: {}, flags: {} }, {
        readFile: noFile,
        hostPaths: [bad],
      }),
      (e: Error) =>
        e instanceof PermissionPlanError && e.message.includes("--host-path") &&
        e.message.includes(`"${bad}"`),
    );
  }
});
