import assert from "node:assert/strict";
import { join } from "node:path";
import { compileArgs, elfArch, resolveDenorts } from "../../scripts/compile.ts";
import { KUBELET_V8_FLAGS } from "../../scripts/v8_flags.ts";
import { CHILD_ENV, makeLayout, ROOT } from "./_helpers.ts";

const decoder = new TextDecoder();

/** Runs scripts/compile.ts with a clean environment plus `env`. */
async function compile(args: string[], env: Record<string, string>) {
  const base: Record<string, string> = { ...CHILD_ENV };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) base[name] = value;
  }
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "scripts/compile.ts"), ...args],
    cwd: ROOT,
    clearEnv: true,
    env: { ...base, ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: result.code,
    stdout: decoder.decode(result.stdout),
    stderr: decoder.decode(result.stderr),
  };
}

function elfHeader(machine: number): Uint8Array {
  const bytes = new Uint8Array(64);
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  bytes[18] = machine & 0xff;
  bytes[19] = machine >> 8;
  return bytes;
}

Deno.test("scripts/compile.ts stops at once without DENORT_BIN", async () => {
  const { code, stderr, stdout } = await compile(["--print-command"], {});
  assert.equal(code, 1);
  assert.match(stderr, /DENORT_BIN is not set/);
  assert.match(stderr, /dl\.deno\.land\/release\/v\d+\.\d+\.\d+\/denort-/);
  assert.doesNotMatch(stdout, /deno compile|permissions:/);
});

Deno.test("scripts/compile.ts names an unreadable DENORT_BIN", async () => {
  const { code, stderr } = await compile(["--print-command"], {
    DENORT_BIN: "/nonexistent/denort",
  });
  assert.equal(code, 1);
  assert.match(stderr, /DENORT_BIN="\/nonexistent\/denort" cannot be read/);
});

Deno.test("scripts/compile.ts builds the compile command with the standard lists", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-compile-" });
  try {
    const fake = join(dir, "denort");
    await Deno.writeTextFile(fake, "not really denort");
    const { code, stdout } = await compile(
      ["--print-command", "--api-server=10.0.0.1:6443"],
      { DENORT_BIN: fake },
    );
    assert.equal(code, 0);
    const line = stdout.split("\n").find((l) => l.includes(" compile "));
    assert.ok(line, stdout);
    assert.ok(line.startsWith(`DENORT_BIN=${fake} `));
    for (
      const part of [
        " --no-prompt ",
        " --cached-only ",
        " --target x86_64-unknown-linux-gnu ",
        ` --output ${join(ROOT, "dist/kubelet-linux-amd64")} `,
        " --allow-net=0.0.0.0:10250,10.0.0.1:6443,127.0.0.1,127.0.0.1:10248,cri.invalid:80,unix:/run/containerd/containerd.sock,unix:/var/lib/kubelet/cgroup-agent.sock,unix:/var/lib/kubelet/device-plugins/kubelet.sock ",
        " --allow-write=/etc/kubernetes/kubelet.conf,/etc/kubernetes/kubelet.conf.tmp,/run/containerd/containerd.sock,/run/kubelet.ts/memory,/var/lib/kubelet,/var/log/containers,/var/log/pods ",
      ]
    ) assert.ok(line.includes(part), `${part} missing in ${line}`);
    // compiled from the bundle: the same single file the audit tests run
    assert.ok(line.endsWith(join(ROOT, "dist/kubelet.js")), line);
    assert.ok(line.includes(" --no-config "));
    assert.ok(
      stdout.includes(
        ` bundle --platform deno --output ${join(ROOT, "dist/kubelet.js")} ${
          join(ROOT, "main.ts")
        }`,
      ),
      stdout,
    );
    assert.doesNotMatch(line, /allow-(all|run|ffi)| -A /);
    // the cgroup agent: the one artifact with every permission, from its own entry point
    const agent = stdout.split("\n").find((l) =>
      l.includes(` --output ${join(ROOT, "dist/cgroup-agent-linux-amd64")} `)
    );
    assert.ok(agent, stdout);
    assert.ok(
      agent.includes(" compile --no-config --cached-only --allow-all "),
    );
    assert.ok(agent.endsWith(join(ROOT, "src/cgroup_agent/main.ts")), agent);
    assert.match(stdout, /skipping linux\/arm64: .*DENORT_BIN_ARM64/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scripts/compile.ts --permissions-from bakes the planner's lists", async () => {
  await using layout = await makeLayout();
  const fake = join(layout.dir, "denort-arm64");
  await Deno.writeFile(fake, elfHeader(0xb7));
  const { code, stdout } = await compile(
    [
      "--print-command",
      "--permissions-from",
      layout.config,
      ...layout.kubeletArgs.slice(2), // --root-dir, --cert-dir
    ],
    { DENORT_BIN: fake },
  );
  assert.equal(code, 0, stdout);
  assert.ok(stdout.includes(`permissions: ${layout.denoFlags.join(" ")}\n`));
  assert.match(stdout, /--target aarch64-unknown-linux-gnu/);
  assert.match(stdout, /skipping linux\/amd64/);
});

Deno.test("elfArch() reads the machine from an ELF header", () => {
  assert.equal(elfArch(elfHeader(0x3e)), "amd64");
  assert.equal(elfArch(elfHeader(0xb7)), "arm64");
  assert.equal(elfArch(elfHeader(0x28)), undefined);
  assert.equal(
    elfArch(new TextEncoder().encode("#!/bin/sh\necho hi\n")),
    undefined,
  );
});

Deno.test("resolveDenorts() lets per-arch variables override DENORT_BIN", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-denort-" });
  try {
    const amd = join(dir, "amd");
    await Deno.writeFile(amd, elfHeader(0x3e));
    const { denorts, notes } = resolveDenorts({
      DENORT_BIN: amd,
      DENORT_BIN_ARM64: "/opt/arm/denort",
    });
    assert.deepEqual(denorts, { amd64: amd, arm64: "/opt/arm/denort" });
    assert.deepEqual(notes, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("compileArgs() refuses unscoped dangerous flags", () => {
  assert.throws(
    () =>
      compileArgs("amd64", {
        permissionFlags: ["--allow-run=/bin/mount"],
        outDir: "/d",
      }),
    /Refusing/,
  );
  assert.throws(
    () =>
      compileArgs("amd64", {
        permissionFlags: ["--allow-run=/bin/mount"],
        plannedRun: ["/etc/k/token-plugin"],
        outDir: "/d",
      }),
    /Refusing/,
  );
  // the kubeconfig's exec credential plugin, exactly as planned, is allowed
  assert.ok(
    compileArgs("amd64", {
      permissionFlags: ["--allow-run=/etc/k/token-plugin"],
      plannedRun: ["/etc/k/token-plugin"],
      outDir: "/d",
    }).includes("--allow-run=/etc/k/token-plugin"),
  );
  assert.throws(
    () =>
      compileArgs("amd64", { permissionFlags: ["--allow-all"], outDir: "/d" }),
    /Refusing/,
  );
  assert.throws(
    () => compileArgs("arm64", { permissionFlags: ["-A"], outDir: "/d" }),
    /Refusing/,
  );
  const args = compileArgs("arm64", {
    permissionFlags: ["--no-prompt", "--allow-sys=hostname"],
    outDir: "/d",
  });
  assert.deepEqual(args.slice(0, 6), [
    "compile",
    "--no-config",
    "--cached-only",
    "--no-prompt",
    "--allow-sys=hostname",
    `--v8-flags=${KUBELET_V8_FLAGS}`,
  ]);
});
