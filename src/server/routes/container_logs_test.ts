import assert from "node:assert/strict";
import { systemClock } from "../../clock/mod.ts";
import { HttpError } from "../http_error.ts";
import {
  type ContainerLogsHost,
  containerLogsRoute,
  parseLogOptions,
} from "./container_logs.ts";

Deno.test("parseLogOptions() decodes PodLogOptions and refuses bad values as upstream", () => {
  const parse = (q: string) => parseLogOptions(new URLSearchParams(q));
  assert.deepEqual(parse(""), {
    follow: false,
    previous: false,
    timestamps: false,
  });
  assert.deepEqual(
    parse(
      "follow=true&previous=1&timestamps=T&tailLines=5&limitBytes=10&sinceSeconds=60",
    ),
    {
      follow: true,
      previous: true,
      timestamps: true,
      tailLines: 5,
      limitBytes: 10,
      sinceSeconds: 60,
    },
  );
  assert.equal(parse("tail=7").tailLines, 7);
  assert.equal(parse("tail=all&tailLines=3").tailLines, undefined);
  const status = (q: string) => {
    try {
      parse(q);
      return 200;
    } catch (e) {
      return e instanceof HttpError ? e.status : 0;
    }
  };
  assert.equal(status("follow=yes"), 400);
  assert.equal(status("tailLines=x"), 400);
  assert.equal(status("tailLines=1.5"), 400);
  assert.equal(status("sinceTime=yesterday"), 400);
  assert.equal(status("tailLines=-1"), 422);
  assert.equal(status("limitBytes=0"), 422);
  assert.equal(status("sinceSeconds=0"), 422);
  assert.equal(status("sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z"), 422);
});

async function withLogs(
  fn: (
    dir: string,
    host: ContainerLogsHost & { running: boolean },
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "kts-logs-" }),
  );
  try {
    await Deno.mkdir(`${dir}/pods/ns_web_u1/app`, { recursive: true });
    const host = {
      clock: systemClock,
      podLogsDir: `${dir}/pods`,
      running: true,
      containerLog(
        ref: { pod: string; container: string },
        options: { previous: boolean },
      ) {
        if (ref.pod !== "web") {
          return Promise.reject(
            new HttpError(404, `pod "${ref.pod}" does not exist`),
          );
        }
        const name = ref.container === "escape"
          ? "escape.log"
          : options.previous
          ? "0.log"
          : "1.log";
        return Promise.resolve({
          path: `${dir}/pods/ns_web_u1/app/${name}`,
          containerId: "c1",
        });
      },
      containerRunning() {
        return Promise.resolve(host.running);
      },
    };
    await fn(dir, host);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function get(host: ContainerLogsHost, target: string) {
  const url = new URL(`https://node${target}`);
  try {
    const response = await containerLogsRoute(host)(new Request(url), url);
    return { status: response.status, body: await response.text() };
  } catch (e) {
    if (e instanceof HttpError) return { status: e.status, body: e.message };
    throw e;
  }
}

const line = (s: number, text: string, tag = "F") =>
  `2026-01-01T00:00:0${s}Z stdout ${tag} ${text}\n`;

Deno.test("containerLogsRoute() serves tail, previous, timestamps and limits", async () => {
  await withLogs(async (dir, host) => {
    const app = `${dir}/pods/ns_web_u1/app`;
    await Deno.writeTextFile(`${app}/0.log`, line(1, "old"));
    await Deno.writeTextFile(
      `${app}/1.log`,
      line(1, "a") + line(2, "b") + line(3, "c"),
    );
    assert.deepEqual(await get(host, "/containerLogs/ns/web/app"), {
      status: 200,
      body: "a\nb\nc\n",
    });
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app?tailLines=2")).body,
      "b\nc\n",
    );
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app?tailLines=0")).body,
      "",
    );
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app?previous=true")).body,
      "old\n",
    );
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app?timestamps=true&tailLines=1"))
        .body,
      "2026-01-01T00:00:03Z c\n",
    );
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app?limitBytes=3")).body,
      "a\nb",
    );
    assert.equal(
      (await get(
        host,
        "/containerLogs/ns/web/app?sinceTime=2026-01-01T00:00:02Z",
      )).body,
      "b\nc\n",
    );
    assert.equal((await get(host, "/containerLogs/ns/nope/app")).status, 404);
    assert.equal((await get(host, "/containerLogs/ns/web")).status, 404);
    assert.equal(
      (await get(host, "/containerLogs/ns/web/app/extra")).status,
      404,
    );
  });
});

Deno.test("containerLogsRoute() never follows a symlink out of the log directory", async () => {
  await withLogs(async (dir, host) => {
    await Deno.writeTextFile(`${dir}/secret`, line(1, "host secret"));
    const app = `${dir}/pods/ns_web_u1/app`;
    await Deno.symlink(`${dir}/secret`, `${app}/escape.log`);
    assert.equal((await get(host, "/containerLogs/ns/web/escape")).status, 403);
    // A symlinked directory on the way is refused too.
    await Deno.remove(app, { recursive: true });
    await Deno.mkdir(`${dir}/elsewhere`);
    await Deno.writeTextFile(`${dir}/elsewhere/1.log`, line(1, "x"));
    await Deno.symlink(`${dir}/elsewhere`, app);
    assert.equal((await get(host, "/containerLogs/ns/web/app")).status, 403);
    // A path outside the directory is refused before any file access.
    const outside = {
      ...host,
      containerLog: () =>
        Promise.resolve({ path: `${dir}/secret`, containerId: "c" }),
    };
    assert.equal((await get(outside, "/containerLogs/ns/web/app")).status, 403);
    const dotdot = {
      ...host,
      containerLog: () =>
        Promise.resolve({ path: `${dir}/pods/../secret`, containerId: "c" }),
    };
    assert.equal((await get(dotdot, "/containerLogs/ns/web/app")).status, 403);
  });
});

Deno.test("containerLogsRoute() follows appended lines, rotation, and ends when the container stops", async () => {
  await withLogs(async (dir, host) => {
    const path = `${dir}/pods/ns_web_u1/app/1.log`;
    await Deno.writeTextFile(path, line(1, "first"));
    const url = new URL("https://node/containerLogs/ns/web/app?follow=true");
    const response = await containerLogsRoute(host)(new Request(url), url);
    const reader = response.body!.pipeThrough(new TextDecoderStream())
      .getReader();
    assert.equal((await reader.read()).value, "first\n");
    await Deno.writeTextFile(path, line(2, "sec", "P") + line(2, "ond"), {
      append: true,
    });
    let got = "";
    while (got !== "second\n") got += (await reader.read()).value ?? "";
    // Rotation: the file is renamed and a new one takes its place.
    await Deno.rename(path, `${path}.20260101-000000`);
    await Deno.writeTextFile(path, line(3, "after rotation"));
    got = "";
    while (got !== "after rotation\n") got += (await reader.read()).value ?? "";
    host.running = false;
    const end = await reader.read();
    assert.equal(end.done, true);
  });
});

Deno.test("containerLogsRoute() stops following when the client goes away", async () => {
  await withLogs(async (dir, host) => {
    await Deno.writeTextFile(`${dir}/pods/ns_web_u1/app/1.log`, line(1, "x"));
    const url = new URL("https://node/containerLogs/ns/web/app?follow=1");
    const response = await containerLogsRoute(host)(new Request(url), url);
    const reader = response.body!.getReader();
    await reader.read();
    const pending = reader.read();
    await reader.cancel();
    assert.equal((await pending).done, true);
  });
});
