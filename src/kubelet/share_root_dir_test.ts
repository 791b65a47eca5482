import * as assert from "node:assert/strict";
import { shareRootDir } from "./share_root_dir.ts";
import { CaptureLogger } from "../log/testing.ts";
import type { RootSharePlan } from "../cgroup_agent/mod.ts";

/** A sharer that answers `plan` (or fails with it) and counts its calls. */
function sharer(plan: RootSharePlan | Error) {
  const calls: string[] = [];
  return {
    calls,
    access: {
      sharer: {
        shareRootDir: () => {
          calls.push("share");
          return plan instanceof Error
            ? Promise.reject(plan)
            : Promise.resolve(plan);
        },
      },
    },
  };
}

const warnings = (logger: CaptureLogger) =>
  logger.records.filter((r) => r.severity !== "info");

Deno.test("shareRootDir() goes on after a share or an already shared root, quietly", async () => {
  for (
    const plan of [
      { action: "share" },
      { action: "nothing", mountPoint: "/" },
    ] as RootSharePlan[]
  ) {
    const logger = new CaptureLogger();
    const { access, calls } = sharer(plan);
    const root = await Deno.makeTempDir();
    try {
      assert.equal(
        await shareRootDir(access, { logger }, { rootDir: root }),
        true,
      );
      assert.deepEqual(calls, ["share"]);
      assert.deepEqual(warnings(logger), []);
    } finally {
      await Deno.remove(root);
    }
  }
});

Deno.test("shareRootDir() creates a missing root dir before sharing it (upstream setupDataDirs)", async () => {
  const parent = await Deno.makeTempDir();
  try {
    const root = `${parent}/a/root`;
    const { access } = sharer({ action: "share" });
    await shareRootDir(access, { logger: new CaptureLogger() }, {
      rootDir: root,
    });
    assert.ok((await Deno.stat(root)).isDirectory);
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

/** Runs `fn` with a fresh temporary root dir, then removes it. */
async function withRoot(fn: (root: string) => Promise<void>) {
  const root = await Deno.makeTempDir();
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("shareRootDir() warns about a refused share with the root and the fix, and goes on", async () => {
  await withRoot(async (root) => {
    const logger = new CaptureLogger();
    const { access } = sharer({ action: "refuse", reason: "mounts below" });
    assert.equal(
      await shareRootDir(access, { logger }, { rootDir: root }),
      true,
    );
    const [warning, ...more] = warnings(logger);
    assert.deepEqual(more, []);
    assert.equal(warning?.severity, "warn");
    assert.equal(warning?.fields.rootDir, root);
    assert.equal(warning?.fields.reason, "mounts below");
    assert.ok(
      String(warning?.fields.fix).includes(
        `mount --bind ${root} ${root} && mount --make-rshared ${root}`,
      ),
    );
  });
});

Deno.test("shareRootDir() stops the kubelet when the mount fails, naming --root-dir and the fix", async () => {
  await withRoot(async (root) => {
    const logger = new CaptureLogger();
    const { access } = sharer(new Error("mount --bind: permission denied"));
    assert.equal(
      await shareRootDir(access, { logger }, { rootDir: root }),
      false,
    );
    const [error] = warnings(logger);
    assert.equal(error?.severity, "error");
    assert.ok(error?.msg.includes(`"--root-dir=${root}"`), error?.msg);
    assert.match(String(error?.fields.err), /permission denied/);
    assert.match(String(error?.fields.fix), /mount --make-rshared/);
  });
});

const PRIVATE = "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw";
const SHARED = "26 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw";

Deno.test("shareRootDir() without a mounter warns only when the table shows a private root", async () => {
  const access = { reason: "no cgroup agent socket at /r/cgroup-agent.sock" };
  const run = async (table: string | undefined) => {
    const logger = new CaptureLogger();
    assert.equal(
      await shareRootDir(access, {
        logger,
        readMountTable: () => Promise.resolve(table),
      }, { rootDir: "/nonexistent/r" }),
      true,
    );
    return warnings(logger);
  };
  const [warning, ...more] = await run(PRIVATE);
  assert.deepEqual(more, []);
  assert.equal(warning?.fields.rootDir, "/nonexistent/r");
  assert.equal(warning?.fields.reason, access.reason);
  assert.match(String(warning?.fields.fix), /cgroup agent.*mount --bind/);
  assert.deepEqual(await run(SHARED), []);
  // a table the kubelet may not read: nothing said
  assert.deepEqual(await run(undefined), []);
});

Deno.test("shareRootDir() does nothing without an access (a simulated runtime)", async () => {
  const logger = new CaptureLogger();
  assert.equal(
    await shareRootDir(undefined, {
      logger,
      readMountTable: () => Promise.resolve(PRIVATE),
    }, { rootDir: "/nonexistent/r" }),
    true,
  );
  assert.deepEqual(logger.records, []);
});
