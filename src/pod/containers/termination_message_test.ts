import assert from "node:assert/strict";
import {
  containerDirectory,
  createTerminationMessageFile,
  criLogContent,
  denoTerminationMessageReader,
  denoTerminationMessageWriter,
  readTerminationMessage,
  type TerminationMessageReader,
  withTerminationMessage,
} from "./termination_message.ts";
import type { ContainerView } from "../types.ts";

function view(extra: Partial<ContainerView> = {}): ContainerView {
  return {
    id: "c1",
    name: "app",
    sandboxId: "s1",
    state: "exited",
    createdAt: 1,
    startedAt: 2,
    finishedAt: 3,
    exitCode: 1,
    reason: "",
    message: "",
    image: "busybox",
    imageRef: "sha256:1",
    hash: "h",
    restartCount: 0,
    containerType: "container",
    terminationMessageHostPath: "/root/pods/u1/containers/app/0000abcd",
    logPath: "/logs/app/0.log",
    ...extra,
  };
}

/** In-memory reader that records what was asked. */
function fakeReader(files: Record<string, string>) {
  const asked: string[] = [];
  const reader: TerminationMessageReader = {
    readAtMost(path, maxBytes) {
      asked.push(`last ${path} ${maxBytes}`);
      const text = files[path];
      return Promise.resolve(
        text === undefined
          ? undefined
          : new TextEncoder().encode(text).slice(-maxBytes),
      );
    },
    readTailLines(path, lines) {
      asked.push(`tail ${path} ${lines}`);
      const text = files[path];
      if (text === undefined) return Promise.resolve(undefined);
      return Promise.resolve(
        text.split("\n").filter((l) => l).slice(-lines).join("\n"),
      );
    },
  };
  return { reader, asked };
}

const LOG = [
  "2026-01-01T00:00:00.000000001Z stdout F starting",
  "2026-01-01T00:00:00.000000002Z stderr P par",
  "2026-01-01T00:00:00.000000003Z stderr F tial failure",
  "",
].join("\n");

Deno.test("criLogContent() keeps the content, joins partial fragments and drops junk", () => {
  assert.equal(criLogContent(LOG, 2048), "starting\npartial failure\n");
  assert.equal(
    criLogContent("garbage\n2026-01-01T00:00:00Z stdout F:x ok\n", 2048),
    "ok\n",
  );
  assert.equal(criLogContent("t stdout F \n", 2048), "\n", "empty line");
  // the end is kept: what a dying process printed last
  assert.equal(criLogContent(LOG, 8), "failure\n");
  // a multi-byte character is never cut in half
  assert.equal(criLogContent("t stdout F hé\n", 2), "\n");
});

Deno.test("readTerminationMessage() prefers the message file, its last 4096 bytes", async () => {
  const { reader, asked } = fakeReader({
    "/root/pods/u1/containers/app/0000abcd": "y".repeat(904) + "x".repeat(4096),
    "/logs/app/0.log": LOG,
  });
  const message = await readTerminationMessage(
    reader,
    view({ terminationMessagePolicy: "FallbackToLogsOnError" }),
  );
  assert.equal(message, "x".repeat(4096));
  assert.deepEqual(asked, ["last /root/pods/u1/containers/app/0000abcd 4096"]);
});

Deno.test("readTerminationMessage() falls back to the log tail only for failed FallbackToLogsOnError containers", async () => {
  const files = {
    "/root/pods/u1/containers/app/0000abcd": "",
    "/logs/app/0.log": LOG,
  };
  const fallback = { terminationMessagePolicy: "FallbackToLogsOnError" };
  const { reader, asked } = fakeReader(files);
  assert.equal(
    await readTerminationMessage(reader, view(fallback)),
    "starting\npartial failure\n",
  );
  assert.ok(asked.includes("tail /logs/app/0.log 80"));
  // message file gone (unreadable): still the logs
  assert.equal(
    await readTerminationMessage(
      reader,
      view({ ...fallback, terminationMessageHostPath: "/root/none" }),
    ),
    "starting\npartial failure\n",
  );
  for (
    const other of [
      view({ ...fallback, exitCode: 0 }),
      view({ ...fallback, reason: "ContainerCannotRun" }),
      view({ terminationMessagePolicy: "File" }),
      view(),
    ]
  ) {
    assert.equal(await readTerminationMessage(reader, other), "");
  }
});

Deno.test("withTerminationMessage() appends to the runtime's own message", () => {
  assert.equal(withTerminationMessage("", "bye\n"), "bye\n");
  assert.equal(withTerminationMessage("oom", "bye"), "oom: bye");
  assert.equal(withTerminationMessage("oom", ""), "oom");
});

Deno.test("the host file system writer/reader create a 0666 file and read heads and tails", async () => {
  const root = await Deno.makeTempDir({ prefix: "kts-term-msg-" });
  try {
    const path = await createTerminationMessageFile(
      denoTerminationMessageWriter,
      { rootDir: `${root}/`, podUid: "u1", containerName: "app" },
    );
    assert.match(
      path,
      new RegExp(`^${root}/pods/u1/containers/app/[0-9a-f]{8}$`),
    );
    assert.equal(
      path.slice(0, path.lastIndexOf("/")),
      containerDirectory(root, "u1", "app"),
    );
    const st = await Deno.stat(path);
    assert.equal(st.size, 0);
    assert.equal(st.mode! & 0o777, 0o666);
    const reader = denoTerminationMessageReader;
    assert.deepEqual(await reader.readAtMost(path, 10), new Uint8Array());
    await Deno.writeTextFile(path, "bye\n".repeat(3));
    assert.equal(
      new TextDecoder().decode(await reader.readAtMost(path, 6)),
      "e\nbye\n",
    );
    assert.equal(await reader.readAtMost(`${root}/missing`, 10), undefined);

    // a log longer than one read chunk: only the last lines come back
    const log = `${root}/0.log`;
    const lines = Array.from(
      { length: 3000 },
      (_, i) => `t stdout F line ${i}`,
    );
    await Deno.writeTextFile(log, `${lines.join("\n")}\n`);
    assert.equal(
      await reader.readTailLines(log, 3),
      "t stdout F line 2997\nt stdout F line 2998\nt stdout F line 2999",
    );
    await Deno.writeTextFile(log, "t stdout F only\n");
    assert.equal(await reader.readTailLines(log, 80), "t stdout F only");
    assert.equal(await reader.readTailLines(`${root}/nope`, 80), undefined);

    await denoTerminationMessageWriter.removeEmptyDir(`${root}/pods/u1`);
    assert.ok((await Deno.stat(path)).isFile, "a non-empty dir stays");
    await denoTerminationMessageWriter.remove(`${root}/pods/u1/containers`);
    await denoTerminationMessageWriter.remove(`${root}/pods/u1/containers`);
    await denoTerminationMessageWriter.removeEmptyDir(`${root}/pods/u1`);
    await assert.rejects(Deno.stat(`${root}/pods/u1`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
