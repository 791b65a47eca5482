import assert from "node:assert/strict";
import { ConfigError, loadConfigFile } from "./mod.ts";

const HEADER =
  "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

interface Captured {
  msg: string;
  kv: Record<string, unknown> | undefined;
}

function capture(): {
  records: Captured[];
  info(msg: string, kv?: Record<string, unknown>): void;
} {
  const records: Captured[] = [];
  return { records, info: (msg, kv) => records.push({ msg, kv }) };
}

async function withFile<T>(
  content: string | Uint8Array,
  fn: (path: string, dir: string) => Promise<T>,
): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/kubelet.yaml`;
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
    return await fn(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function loadError(content: string): Promise<ConfigError> {
  return await withFile(content, async (path) => {
    try {
      await loadConfigFile(path);
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      assert.ok(!err.message.includes("\n"), `one line: ${err.message}`);
      assert.ok(err.message.includes(path), "names the file");
      return err;
    }
    throw new assert.AssertionError({ message: "expected a ConfigError" });
  });
}

Deno.test("loadConfigFile() reads values, canonicalizes durations and resolves relative paths", async () => {
  await withFile(
    `${HEADER}maxPods: 42\nsyncFrequency: 90s\nstaticPodPath: manifests\ntlsCertFile: /abs/cert\nauthentication:\n  x509:\n    clientCAFile: ca/ca.crt\n  anonymous:\n    enabled: true\npodLogsDir: logs\nevictionHard:\n  memory.available: 1Gi\n`,
    async (path, dir) => {
      const c = await loadConfigFile(path);
      assert.equal(c.maxPods, 42);
      assert.equal(c.syncFrequency, "1m30s");
      assert.equal(c.staticPodPath, `${dir}/manifests`);
      assert.equal(c.tlsCertFile, "/abs/cert");
      assert.equal(c.authentication.x509.clientCAFile, `${dir}/ca/ca.crt`);
      assert.equal(c.authentication.anonymous.enabled, true);
      assert.equal(c.authentication.webhook.enabled, true);
      assert.equal(c.podLogsDir, `${dir}/logs`);
      assert.equal(c.resolvConf, "/etc/resolv.conf");
      assert.deepEqual(c.evictionHard, { "memory.available": "1Gi" });
    },
  );
});

Deno.test("loadConfigFile() merges default eviction keys when mergeDefaultEvictionSettings is set", async () => {
  await withFile(
    `${HEADER}mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 1Gi\n`,
    async (path) => {
      const c = await loadConfigFile(path, { os: "linux" });
      assert.equal(c.evictionHard?.["memory.available"], "1Gi");
      assert.equal(c.evictionHard?.["nodefs.available"], "10%");
      assert.equal(Object.keys(c.evictionHard ?? {}).length, 5);
    },
  );
  await withFile(`${HEADER}evictionHard: {}\n`, async (path) => {
    assert.deepEqual((await loadConfigFile(path)).evictionHard, {});
  });
});

Deno.test("loadConfigFile() accepts a JSON file", async () => {
  await withFile(
    JSON.stringify({
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      port: 10251,
      logging: { flushFrequency: 2000000000 },
    }),
    async (path) => {
      const c = await loadConfigFile(path);
      assert.equal(c.port, 10251);
      assert.equal(c.logging.flushFrequency, "2s");
    },
  );
});

Deno.test("loadConfigFile() reports a missing file like upstream", async () => {
  const path = "/nonexistent/kts/k.yaml";
  await assert.rejects(loadConfigFile(path), {
    name: "ConfigError",
    message:
      `failed to load kubelet config file, path: ${path}, error: failed to load Kubelet config file ${path}, error failed to read kubelet config file "${path}", error: open ${path}: no such file or directory`,
  });
});

Deno.test("loadConfigFile() reports an unreadable file", async () => {
  await withFile(HEADER, async (path, dir) => {
    if (Deno.uid?.() !== 0) {
      await Deno.chmod(path, 0o000);
      await assert.rejects(loadConfigFile(path), /: permission denied$/);
      return;
    }
    // root ignores file modes: load it from a process without read access.
    const script = `${dir}/probe.ts`;
    const mod = new URL("./mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { loadConfigFile } from ${JSON.stringify(mod)};\n` +
        `try { await loadConfigFile(${JSON.stringify(path)}); } catch (e) {\n` +
        `  await Deno.stdout.write(new TextEncoder().encode((e as Error).message));\n}\n`,
    );
    const config = new URL("../../deno.json", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--quiet", "--config", config, script],
      stdout: "piped",
      stderr: "null",
    }).output();
    assert.match(
      new TextDecoder().decode(out.stdout),
      /error: open .*kubelet\.yaml: permission denied \(the Deno sandbox does not allow reading this path; grant it with --allow-read\)$/,
    );
  });
});

Deno.test("loadConfigFile() reports a path through a non-directory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/plain`, "x");
    await assert.rejects(
      loadConfigFile(`${dir}/plain/kubelet.yaml`),
      {
        message: new RegExp(
          `open ${dir}/plain/kubelet\\.yaml: not a directory$`,
        ),
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadConfigFile() reports a directory given as the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(loadConfigFile(dir), /is a directory/);
  } finally {
    await Deno.remove(dir);
  }
});

Deno.test("loadConfigFile() reports an empty file", async () => {
  const err = await loadError("");
  assert.match(
    err.message,
    /error: failed to load Kubelet config file .* error kubelet config file ".*kubelet\.yaml" was empty$/,
  );
});

Deno.test("loadConfigFile() reports YAML syntax errors with line and column", async () => {
  const err = await loadError(`${HEADER}port: 1\nfoo: [1, 2\nbar: x\n`);
  assert.match(err.message, /failed to decode: yaml: line \d+, column \d+: /);
});

Deno.test("loadConfigFile() names the field and expected type for wrong types", async () => {
  const err = await loadError(`${HEADER}maxPods: abc\n`);
  assert.match(
    err.message,
    /failed to decode: field maxPods: expected an int32 \(a whole number\), got "abc"; fix the value in the config file$/,
  );
  assert.equal(err.field, "maxPods");
  const nested = await loadError(
    `${HEADER}authentication:\n  webhook:\n    enabled: yes-please\n`,
  );
  assert.match(
    nested.message,
    /field authentication\.webhook\.enabled: expected a boolean/,
  );
  const duration = await loadError(`${HEADER}syncFrequency: soon\n`);
  assert.match(
    duration.message,
    /field syncFrequency: time: invalid duration "soon"/,
  );
  const quantity = await loadError(`${HEADER}containerLogMaxSize: lots\n`);
  assert.match(
    quantity.message,
    /field containerLogMaxSize: quantities must match the regular expression/,
  );
  const big = await loadError(`${HEADER}port: 99999999999\n`);
  assert.match(big.message, /field port: /);
});

Deno.test("loadConfigFile() falls back to lenient decoding for duplicate and unknown fields", async () => {
  const logger = capture();
  await withFile(
    `${HEADER}port: 1111\nport: 2222\nnotAField: 1\n`,
    async (path) => {
      const c = await loadConfigFile(path, { logger });
      assert.equal(c.port, 2222);
      assert.equal((c as Record<string, unknown>).notAField, undefined);
    },
  );
  assert.equal(logger.records.length, 1);
  assert.equal(
    logger.records[0]?.msg,
    "Using lenient decoding as strict decoding failed",
  );
  const text = String(logger.records[0]?.kv?.err);
  assert.match(text, /^strict decoding error: /);
  assert.match(text, /yaml: line 4: key "port" already set in map/);
  assert.match(text, /unknown field "notAField"/);
});

Deno.test("loadConfigFile() strict decoding passes silently for a clean file", async () => {
  const logger = capture();
  await withFile(
    `${HEADER}port: 1111\n`,
    (path) => loadConfigFile(path, { logger }),
  );
  assert.equal(logger.records.length, 0);
});

Deno.test("loadConfigFile() rejects files over 10 MiB", async () => {
  const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20);
  await withFile(big, async (path) => {
    await assert.rejects(loadConfigFile(path), /larger than the 10 MiB limit/);
  });
});

Deno.test("loadConfigFile() bounds alias expansion (alias bomb)", async () => {
  const lines = [
    HEADER.trimEnd(),
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
  ];
  const names = "abcdefghi";
  for (let i = 1; i < names.length; i++) {
    const prev = names[i - 1];
    lines.push(
      `${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(",")}]`,
    );
  }
  const err = await loadError(lines.join("\n") + "\n");
  assert.match(err.message, /alias bomb/);
});

Deno.test("loadConfigFile() rejects a wrong envelope", async () => {
  const noKind = await loadError("port: 123\n");
  assert.match(
    noKind.message,
    /failed to decode: Object 'Kind' is missing in '\{"port":123\}'/,
  );
  const badVersion = await loadError(
    "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n",
  );
  assert.match(
    badVersion.message,
    /no kind "KubeletConfiguration" is registered for version "kubelet\.config\.k8s\.io\/v1"/,
  );
  const badKind = await loadError(
    "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n",
  );
  assert.match(badKind.message, /no kind "Pod" is registered/);
  const list = await loadError("- a\n- b\n");
  assert.match(list.message, /must be a mapping/);
});

Deno.test("loadConfigFile() reports an unknown feature gate cleanly", async () => {
  await withFile(`${HEADER}featureGates:\n  Foo: true\n`, async (path) => {
    await assert.rejects(loadConfigFile(path), {
      message:
        `failed to load kubelet config file, path: ${path}, error: unrecognized feature gate: Foo`,
    });
  });
});

Deno.test("loadConfigFile() reads YAML 1.1 scalars like Go's yaml.v2", async () => {
  await withFile(
    `${HEADER}failSwapOn: no\nserializeImagePulls: off\nclusterDomain: 2025-01-01\nproviderID: 10:30\nmaxPods: 0x20\n`,
    async (path) => {
      const c = await loadConfigFile(path);
      assert.equal(c.failSwapOn, false);
      assert.equal(c.serializeImagePulls, false);
      assert.equal(c.clusterDomain, "2025-01-01");
      assert.equal(c.providerID, "10:30");
      assert.equal(c.maxPods, 32);
    },
  );
});

Deno.test("loadConfigFile() names list elements in field paths", async () => {
  const err = await loadError(
    `${HEADER}registerWithTaints:\n- key: a\n  effect: NoSchedule\n- key: b\n  effect: 7\n`,
  );
  assert.equal(err.field, "registerWithTaints[1].effect");
  const logger = capture();
  await withFile(
    `${HEADER}logging:\n  vmodule:\n  - filePattern: x\n    verbosity: 2\n    extra: 1\n`,
    (path) => loadConfigFile(path, { logger }),
  );
  assert.match(
    String(logger.records[0]?.kv?.err),
    /unknown field "logging\.vmodule\[0\]\.extra"/,
  );
});

Deno.test("loadConfigFile() refuses deeply nested collections before parsing", async () => {
  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const err = await loadError(`${HEADER}clusterDNS: ${deep}\n`);
  assert.match(
    err.message,
    /failed to decode: yaml: line 3, column 77: collections nested more than 64 levels deep; flatten the document$/,
  );
  // Brackets inside quotes and comments do not count.
  await withFile(
    `${HEADER}# ${"[".repeat(100)}\nclusterDomain: "${"{".repeat(100)}"\n`,
    async (path) => {
      assert.equal((await loadConfigFile(path)).clusterDomain, "{".repeat(100));
    },
  );
});

Deno.test("loadConfigFile() reads only the first YAML document, like yaml.Unmarshal", async () => {
  await withFile(`---\n${HEADER}port: 1234\n---\nport: [\n`, async (path) => {
    assert.equal((await loadConfigFile(path)).port, 1234);
  });
  const comments = await loadError("# only a comment\n");
  assert.match(comments.message, /must be a mapping/);
});

Deno.test("loadConfigFile() resolves relative paths like filepath.Join (no trailing slash, dot segments cleaned)", async () => {
  await withFile(
    `${HEADER}staticPodPath: manifests/\nvolumePluginDir: ./plugins/../volume/\nresolvConf: ../etc//resolv.conf\n`,
    async (path, dir) => {
      const c = await loadConfigFile(path);
      assert.equal(c.staticPodPath, `${dir}/manifests`);
      assert.equal(c.volumePluginDir, `${dir}/volume`);
      const parent = dir.slice(0, dir.lastIndexOf("/"));
      assert.equal(c.resolvConf, `${parent}/etc/resolv.conf`);
    },
  );
});

Deno.test("loadConfigFile() reads YAML 1.1 scalars as sigs.k8s.io/yaml does", async () => {
  await withFile(
    `${HEADER}failSwapOn: no\nserializeImagePulls: on\nenableServer: yes\nmaxPods: 0777\nregistryBurst: 1e3\nport: 0x2800\n`,
    async (path) => {
      const c = await loadConfigFile(path);
      assert.equal(c.failSwapOn, false);
      assert.equal(c.serializeImagePulls, true);
      assert.equal(c.enableServer, true);
      assert.equal(c.maxPods, 511);
      assert.equal(c.registryBurst, 1000);
      assert.equal(c.port, 10240);
    },
  );
  const inf = await loadError(`${HEADER}memoryThrottlingFactor: .inf\n`);
  assert.match(
    inf.message,
    /failed to decode: json: unsupported value: \+Inf$/,
  );
});
