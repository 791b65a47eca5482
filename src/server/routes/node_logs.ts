/**
 * `GET /logs/{path}`: the node's log directory (`/var/log`) as upstream's system log handler
 * serves it (`InstallSystemLogHandler` in pkg/kubelet/server/server.go over Go's
 * `http.FileServer`): a directory is an HTML listing, a file its bytes. As Go's file server:
 * a directory without its trailing slash and a file with one are redirected (301, relative
 * `Location`), `…/index.html` is redirected to `./` and a directory's `index.html` is served
 * in place of its listing, `If-Modified-Since` gets a 304. Symlinks are followed only while
 * they stay in the directory (upstream follows any); `..` and encoded tricks never get here
 * (the handler's canonical path check answers 400 first).
 *
 * @module
 */

import { clean } from "../../util/posix_path.ts";
import { HttpError, textResponse } from "../http_error.ts";
import type { HttpRequest } from "../http_request.ts";
import {
  openResolved,
  resolveBelow,
  type ResolvedEntry,
} from "../logs/safe_open.ts";
import type { Route } from "./healthz.ts";

/** What the route reads from the kubelet. */
export interface NodeLogsHost {
  /** The directory served (upstream's fixed `/var/log`). */
  logDir(): string;
}

/** The prefix the route is mounted at. */
export const NODE_LOGS_PREFIX = "/logs/";

const SNIFF_BYTES = 512;

/** Go's `url.URL{Path: name}.String()` for one listing entry. */
export function escapeListingName(name: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(name)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~$&+,/:;=@]/.test(c)
      ? c
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  // A first segment with a colon would read as a scheme.
  const first = out.split("/")[0]!;
  return first.includes(":") ? `./${out}` : out;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&#34;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** Go's directory listing page for `entries` (sorted by name, directories with a `/`). */
export function listingHtml(
  entries: ReadonlyArray<{ name: string; isDirectory: boolean }>,
): string {
  const sorted = [...entries].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
  let body =
    '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n';
  for (const entry of sorted) {
    const name = entry.isDirectory ? `${entry.name}/` : entry.name;
    body += `<a href="${escapeListingName(name)}">${escapeHtml(name)}</a>\n`;
  }
  return body + "</pre>\n";
}

/**
 * The content type Go's `DetectContentType` gives the usual log files: gzip by its magic,
 * text when no byte is a control character other than whitespace, else binary.
 */
export function sniffContentType(head: Uint8Array): string {
  if (head[0] === 0x1f && head[1] === 0x8b && head[2] === 0x08) {
    return "application/x-gzip";
  }
  const binary = head.some((b) =>
    b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) ||
    (b >= 0x1c && b <= 0x1f)
  );
  return binary ? "application/octet-stream" : "text/plain; charset=utf-8";
}

function redirect(location: string, url: URL): Response {
  return new Response(null, {
    status: 301,
    headers: { location: `${location}${url.search}` },
  });
}

/** 304 when `If-Modified-Since` is at or after the modification time (whole seconds). */
function notModified(request: HttpRequest, mtime: Date | null): boolean {
  const since = request.headers.get("if-modified-since");
  if (!since || !mtime || mtime.getTime() <= 0) return false;
  const at = Date.parse(since);
  return !Number.isNaN(at) &&
    Math.floor(mtime.getTime() / 1000) * 1000 <= at;
}

function lastModified(mtime: Date | null): Record<string, string> {
  return mtime && mtime.getTime() > 0
    ? { "last-modified": mtime.toUTCString() }
    : {};
}

async function serveFile(
  request: HttpRequest,
  entry: ResolvedEntry,
): Promise<Response> {
  if (notModified(request, entry.info.mtime)) {
    return new Response(null, { status: 304 });
  }
  const file = await openResolved(entry);
  const head = new Uint8Array(SNIFF_BYTES);
  const read = (await file.read(head)) ?? 0;
  await file.seek(0, Deno.SeekMode.Start);
  return new Response(file.readable, {
    status: 200,
    headers: {
      "content-type": sniffContentType(head.subarray(0, read)),
      "content-length": String(entry.info.size),
      ...lastModified(entry.info.mtime),
    },
  });
}

async function serveDirectory(
  request: HttpRequest,
  root: string,
  path: string,
  entry: ResolvedEntry,
): Promise<Response> {
  const index = await resolveBelow(root, `${path}/index.html`).catch(
    () => undefined,
  );
  if (index?.info.isFile) return serveFile(request, index);
  if (notModified(request, entry.info.mtime)) {
    return new Response(null, { status: 304 });
  }
  const entries: Array<{ name: string; isDirectory: boolean }> = [];
  try {
    for await (const e of Deno.readDir(entry.realPath)) {
      entries.push({ name: e.name, isDirectory: e.isDirectory });
    }
  } catch {
    return textResponse(500, "Error reading directory\n");
  }
  // Listed what was resolved, not a directory swapped in meanwhile.
  const after = await resolveBelow(root, path);
  if (
    after.realPath !== entry.realPath || after.info.ino !== entry.info.ino
  ) {
    throw new HttpError(403, "Forbidden: the directory changed while listing");
  }
  return new Response(listingHtml(entries), {
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      ...lastModified(entry.info.mtime),
    },
  });
}

/** The route of `/logs/` over `host.logDir()`. */
export function nodeLogsRoute(host: NodeLogsHost): Route {
  return async (request, url) => {
    // The handler has checked the raw path; this is its decoded form below the prefix.
    const rest = decodeURIComponent(url.pathname).slice(
      NODE_LOGS_PREFIX.length - 1,
    );
    if (rest.endsWith("/index.html")) return redirect("./", url);
    const root = host.logDir();
    const relative = clean(rest);
    const path = relative === "/" ? root : `${root}${relative}`;
    const entry = await resolveBelow(root, path);
    const base = relative.slice(relative.lastIndexOf("/") + 1);
    if (entry.info.isDirectory) {
      if (!rest.endsWith("/")) return redirect(`${base}/`, url);
      return serveDirectory(request, root, path, entry);
    }
    if (rest.endsWith("/")) return redirect(`../${base}`, url);
    if (!entry.info.isFile) throw new HttpError(404, "404 page not found");
    return serveFile(request, entry);
  };
}

/** The route when `enableSystemLogHandler` is false (upstream's answer). */
export function disabledNodeLogsRoute(): Promise<Response> {
  return Promise.reject(new HttpError(405, "logs endpoint is disabled."));
}
