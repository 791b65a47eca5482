import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  type ApiHandlerOptions,
  type ApiServerHost,
  createApiHandler,
} from "../api_handler.ts";
import { alwaysAllow } from "../auth/authorize.ts";
import {
  escapeListingName,
  listingHtml,
  sniffContentType,
} from "./node_logs.ts";

/** A node log directory with files, a subdirectory, symlinks in and out, and a secret outside. */
async function logTree(): Promise<{ base: string; root: string }> {
  const base = await Deno.makeTempDir({ prefix: "kts-node-logs-" });
  const root = `${base}/log`;
  await Deno.mkdir(`${root}/pods/ns_web_1`, { recursive: true });
  await Deno.mkdir(`${base}/outside`);
  await Deno.writeTextFile(`${base}/outside/secret`, "secret\n");
  await Deno.writeTextFile(`${root}/syslog`, "line 1\nline 2\n");
  await Deno.writeTextFile(`${root}/pods/ns_web_1/0.log`, "pod line\n");
  await Deno.writeFile(`${root}/wtmp`, new Uint8Array([0, 1, 2, 3, 255]));
  await Deno.writeTextFile(`${root}/x<y>&'z".log`, "odd\n");
  await Deno.symlink(`${root}/syslog`, `${root}/syslog.link`);
  await Deno.symlink(`${base}/outside/secret`, `${root}/escape`);
  await Deno.symlink(`${base}/outside`, `${root}/escdir`);
  await Deno.symlink("../../outside/secret", `${root}/pods/relative-escape`);
  return { base, root };
}

function handlerFor(root: string, options: ApiHandlerOptions = {}) {
  const host: ApiServerHost = {
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    syncLoop: { latestLoopEntryTime: () => undefined },
    resyncIntervalMs: 60_000,
    nodeName: "node-a",
    pods: () => [],
    runningPods: () => Promise.resolve([]),
    config: () => ({}),
    nodeLogs: { logDir: () => root },
  };
  const handler = createApiHandler(host, {
    auth: {
      authenticate: () =>
        Promise.resolve({ user: { name: "admin", groups: [] } }),
      authorizer: alwaysAllow,
    },
    ...options,
  });
  return async (target: string, headers: Record<string, string> = {}) => {
    const response = await handler(
      new Request(new URL(target, "https://node-a:10250"), { headers }),
      { target, peerCertificates: [] },
    );
    return {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
    };
  };
}

Deno.test("/logs/ lists the node log directory as Go's file server does", async () => {
  const { base, root } = await logTree();
  try {
    const get = handlerFor(root);
    const listing = await get("/logs/");
    assert.equal(listing.status, 200);
    assert.equal(
      listing.headers.get("content-type"),
      "text/html; charset=utf-8",
    );
    assert.equal(
      listing.body,
      '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n' +
        '<a href="escape">escape</a>\n' +
        '<a href="escdir">escdir</a>\n' +
        '<a href="pods/">pods/</a>\n' +
        '<a href="syslog">syslog</a>\n' +
        '<a href="syslog.link">syslog.link</a>\n' +
        '<a href="wtmp">wtmp</a>\n' +
        '<a href="x%3Cy%3E&%27z%22.log">x&lt;y&gt;&amp;&#39;z&#34;.log</a>\n' +
        "</pre>\n",
    );
    const sub = await get("/logs/pods/ns_web_1/");
    assert.match(sub.body, /<a href="0.log">0.log<\/a>/);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("/logs/<file> serves the bytes with type, length and Last-Modified, and 304 when unchanged", async () => {
  const { base, root } = await logTree();
  try {
    const get = handlerFor(root);
    const file = await get("/logs/syslog");
    assert.equal(file.status, 200);
    assert.equal(file.body, "line 1\nline 2\n");
    assert.equal(
      file.headers.get("content-type"),
      "text/plain; charset=utf-8",
    );
    assert.equal(file.headers.get("content-length"), "14");
    const modified = file.headers.get("last-modified");
    assert.ok(modified);
    const again = await get("/logs/syslog", { "if-modified-since": modified });
    assert.equal(again.status, 304);
    assert.equal(
      (await get("/logs/wtmp")).headers.get("content-type"),
      "application/octet-stream",
    );
    assert.equal((await get("/logs/pods/ns_web_1/0.log")).body, "pod line\n");
    // A symlink that stays in the directory is followed.
    assert.equal((await get("/logs/syslog.link")).body, "line 1\nline 2\n");
    assert.equal((await get("/logs/x%3Cy%3E&'z%22.log")).body, "odd\n");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("/logs/ redirects as Go's file server: directories get a slash, files lose it, index.html goes to ./", async () => {
  const { base, root } = await logTree();
  try {
    const get = handlerFor(root);
    const dir = await get("/logs/pods?x=1");
    assert.equal(dir.status, 301);
    assert.equal(dir.headers.get("location"), "pods/?x=1");
    const file = await get("/logs/syslog/");
    assert.equal(file.status, 301);
    assert.equal(file.headers.get("location"), "../syslog");
    const index = await get("/logs/pods/index.html");
    assert.equal(index.status, 301);
    assert.equal(index.headers.get("location"), "./");
    await Deno.writeTextFile(`${root}/pods/index.html`, "<p>index</p>");
    assert.equal((await get("/logs/pods/")).body, "<p>index</p>");
    assert.equal((await get("/logs/nope")).status, 404);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("/logs/ never serves anything outside the node log directory", async () => {
  const { base, root } = await logTree();
  try {
    const get = handlerFor(root);
    for (
      const [target, status] of [
        ["/logs/escape", 403],
        ["/logs/escdir/secret", 403],
        ["/logs/escdir/", 403],
        ["/logs/pods/relative-escape", 403],
        ["/logs/../outside/secret", 400],
        ["/logs/%2e%2e/outside/secret", 400],
        ["/logs/..%2foutside/secret", 400],
        ["/logs/pods/..%2f..%2foutside/secret", 400],
        ["/logs//outside/secret", 400],
        ["/logs/%2f..%2foutside%2fsecret", 400],
        ["/logs/pods/%252e%252e/%252e%252e/outside/secret", 400],
      ] as const
    ) {
      const answer = await get(target);
      assert.equal(answer.status, status, target);
      assert.ok(!answer.body.includes("secret\n"), target);
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("/logs/ answers 405 when the system log handler or the debugging handlers are off", async () => {
  const { base, root } = await logTree();
  try {
    const off = await handlerFor(root, { enableSystemLogHandler: false })(
      "/logs/syslog",
    );
    assert.equal(off.status, 405);
    assert.match(off.body, /logs endpoint is disabled\./);
    const debug = await handlerFor(root, { enableDebuggingHandlers: false })(
      "/logs/",
    );
    assert.equal(debug.status, 405);
    assert.match(debug.body, /Debug endpoints are disabled\./);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("escapeListingName(), listingHtml() and sniffContentType() follow Go", () => {
  assert.equal(escapeListingName("a b(1)!*.log"), "a%20b%281%29%21%2A.log");
  assert.equal(escapeListingName("k8s:audit.log"), "./k8s:audit.log");
  assert.equal(escapeListingName("ü"), "%C3%BC");
  assert.match(
    listingHtml([{ name: "b", isDirectory: false }, {
      name: "a",
      isDirectory: true,
    }]),
    /<a href="a\/">a\/<\/a>\n<a href="b">b<\/a>\n/,
  );
  assert.equal(
    sniffContentType(new Uint8Array([0x1f, 0x8b, 0x08, 0])),
    "application/x-gzip",
  );
  assert.equal(
    sniffContentType(new TextEncoder().encode("a\tb\r\n")),
    "text/plain; charset=utf-8",
  );
});
