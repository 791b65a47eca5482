/**
 * The cgroup agent's executor: listens on a unix socket, reads one JSON request per line,
 * lets `validate.ts` decide, does the one file operation (or the kill, or with the systemd
 * driver the one slice call over its own system bus connection, or the one logind call of
 * graceful shutdown) and answers one JSON line. It runs with every Deno permission (the only
 * way Deno opens /sys and /proc), so it does nothing the table in `validate.ts` does not allow
 * and never follows a symbolic link inside the cgroup tree.
 *
 * @module
 */

import {
  type CgroupTreeFs,
  denoCgroupTreeFs,
  readFilesystemFigures,
  readProcsBelow,
} from "./cgroup_fs.ts";
import { detectSwapController } from "./swap_controller.ts";
import {
  type VolumeTmpfsExecutor,
  volumeTmpfsExecutor,
} from "./volume_tmpfs_exec.ts";
import {
  type LocalBlockExecutor,
  localBlockExecutor,
} from "./volume_local_block_exec.ts";
import {
  type SubPathBindExecutor,
  subPathBindExecutor,
} from "./volume_subpath_exec.ts";
import {
  type RootShareExecutor,
  rootShareExecutor,
} from "./root_shared_exec.ts";
import {
  type AgentConfig,
  type AgentRequest,
  type AgentScope,
  agentScope,
  CGROUP_MOUNT,
  checkRequest,
  parseRequest,
} from "./validate.ts";
import {
  type AgentSession,
  type LogindRelay,
  logindRelay,
} from "./logind_relay.ts";
import {
  connectSystemd,
  reconnectingSystemd,
  type Slices,
  systemdSlices,
  type SystemdUnits,
} from "../systemd/mod.ts";

/** Options of {@linkcode serveCgroupAgent}. */
export interface CgroupAgentOptions extends AgentConfig {
  /** The unix socket to listen on (a stale socket there is replaced). */
  socket: string;
  /**
   * The kubelet's root dir, below which pod volumes may get a tmpfs and which may be made a
   * shared mount (default: the socket's directory, since the socket is
   * `<root-dir>/cgroup-agent.sock`).
   */
  rootDir?: string;
  /** Tests only: a directory standing in for `/` (its `sys/fs/cgroup`, `proc`, ...). */
  root?: string;
  /** Tests only: the file operations (a temp tree's rmdir must drop the interface files). */
  fs?: CgroupTreeFs;
  /**
   * Tests only: the slice calls (default with the systemd driver: systemd over the system
   * bus, connected at the first slice request and again after a lost connection).
   */
  slices?: Slices;
  /** Tests only: logind (default: on the system bus, connected at the first logind request). */
  logind?: LogindRelay;
  /** Told about each refused or failed request. */
  onError?: (message: string) => void;
  /** Tests only: binds the listener (default `Deno.listen`), to look at it while it binds. */
  listen?: (path: string) => Deno.UnixListener;
}

/** A running agent. */
export interface CgroupAgent {
  scope: AgentScope;
  close(): void;
  /** Settles when the listener has stopped. */
  finished: Promise<void>;
}

/** The error the client rebuilds (`name` is a `Deno.errors` class name when it is one). */
export interface AgentError {
  name: string;
  message: string;
}

async function refuseSymlinks(
  root: string,
  path: string,
  version: "v1" | "v2",
): Promise<void> {
  if (!path.startsWith(CGROUP_MOUNT + "/")) return;
  const parts = path.slice(CGROUP_MOUNT.length + 1).split("/");
  let dir = root + CGROUP_MOUNT;
  for (const [i, part] of parts.entries()) {
    dir += `/${part}`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(dir);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    // v1 mounts link co-mounted hierarchies (cpu → cpu,cpuacct) at the top; nothing below
    if (info.isSymlink && !(version === "v1" && i === 0)) {
      throw new Deno.errors.PermissionDenied(
        `cgroup agent refuses the symbolic link "${CGROUP_MOUNT}/${
          parts.slice(0, i + 1).join("/")
        }"`,
      );
    }
  }
}

/** What a request is executed with. */
interface Executors {
  fs: CgroupTreeFs;
  root: string;
  scope: AgentScope;
  tmpfs: VolumeTmpfsExecutor;
  localBlock: LocalBlockExecutor;
  subPaths: SubPathBindExecutor;
  rootShare: RootShareExecutor;
  slices: Slices | undefined;
  logind: LogindRelay;
}

async function execute(
  {
    fs,
    root,
    scope,
    tmpfs,
    localBlock,
    subPaths,
    rootShare,
    slices,
    logind,
  }: Executors,
  req: AgentRequest,
  session: AgentSession,
): Promise<unknown> {
  switch (req.op) {
    case "logindInhibitDelay":
      return await logind.inhibitDelayMaxMs();
    case "logindWriteInhibitDelay":
      return await logind.writeInhibitDelay(req.seconds);
    case "logindReload":
      return await logind.reload();
    case "logindInhibit":
      return await logind.inhibit(session);
    case "logindWatch":
      return await logind.watch(session);
  }
  if (
    req.op === "startSlice" || req.op === "setSlice" || req.op === "stopSlice"
  ) {
    if (!slices) throw new Error("no systemd connection");
    if (req.op === "startSlice") return await slices.start(req.cgroup);
    if (req.op === "stopSlice") return await slices.stop(req.cgroup);
    return await slices.set(req.cgroup, req.resources);
  }
  if (req.op === "mountVolumeTmpfs") {
    return await tmpfs.mountVolumeTmpfs(req.target, req.sizeBytes);
  }
  if (req.op === "unmountVolumeTmpfs") {
    return await tmpfs.unmountVolumeTmpfs(req.target);
  }
  if (req.op === "mountLocalBlock") {
    return await localBlock.mountLocalBlock(req.target, req.mount) ?? null;
  }
  if (req.op === "unmountLocalBlock") {
    return await localBlock.unmountLocalBlock(req.target);
  }
  if (req.op === "isBlockDevice") {
    return await localBlock.isBlockDevice(req.device);
  }
  if (req.op === "bindSubPath") {
    return await subPaths.bindSubPath(req.target, req.source);
  }
  if (req.op === "cleanSubPaths") {
    await subPaths.cleanSubPaths(req.uid);
    return null;
  }
  if (req.op === "shareRootDir") return await rootShare.shareRootDir();
  if (req.op === "swapController") {
    return (await detectSwapController(root)) ?? null;
  }
  if (req.op === "statfs") return await readFilesystemFigures(root + req.path);
  if (req.op === "kill") {
    const mount = root + CGROUP_MOUNT;
    const dirs = scope.version === "v2"
      ? [mount + req.cgroup]
      : (await fs.readDirNames(mount)).map((h) => `${mount}/${h}${req.cgroup}`);
    for (const dir of dirs) {
      await refuseSymlinks(root, dir.slice(root.length), scope.version);
    }
    const pids = await readProcsBelow(fs, dirs);
    if (!pids.includes(req.pid)) {
      throw new Deno.errors.NotFound(
        `pid ${req.pid} is not in cgroup "${req.cgroup}"`,
      );
    }
    Deno.kill(req.pid, "SIGKILL");
    return null;
  }
  await refuseSymlinks(root, req.path, scope.version);
  const path = root + req.path;
  switch (req.op) {
    case "exists":
      return await fs.exists(path);
    case "readDirNames":
      return await fs.readDirNames(path);
    case "modifiedMs":
      return (await Deno.stat(path)).mtime?.getTime() ?? null;
    case "mkdirs":
      return await fs.mkdirs(path);
    case "readTextFile":
      return await fs.readTextFile(path);
    case "writeTextFile":
      return await fs.writeTextFile(path, req.text);
    case "rmdir":
      return await fs.rmdir(path);
  }
}

/** One response line for one request line. */
async function answer(
  executors: Executors,
  line: string,
  onError: (message: string) => void,
  session: AgentSession,
): Promise<string> {
  const req = parseRequest(line);
  let error: AgentError;
  if ("error" in req) error = { name: "TypeError", message: req.error };
  else {
    const refusal = checkRequest(executors.scope, req);
    if (refusal === undefined) {
      try {
        const value = await execute(executors, req, session);
        return JSON.stringify({ ok: true, value: value ?? null });
      } catch (e) {
        error = e instanceof Error
          ? { name: e.name, message: e.message }
          : { name: "Error", message: String(e) };
      }
    } else error = { name: "PermissionDenied", message: refusal };
  }
  onError(`${error.name}: ${error.message}`);
  return JSON.stringify({ ok: false, error });
}

/**
 * Serves one connection: one answer per request line, in order; pushed event lines go between
 * answers, never inside one. Whatever the connection's requests left behind (a lock, a watch)
 * ends with it.
 */
async function serveConnection(
  conn: Deno.Conn,
  handle: (line: string, session: AgentSession) => Promise<string>,
): Promise<void> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const cleanups: (() => void)[] = [];
  let ended = false;
  let writes: Promise<void> = Promise.resolve();
  const send = (text: string) => {
    writes = writes.then(() => writeAll(conn, encoder.encode(text + "\n")))
      .catch(() => {});
    return writes;
  };
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      conn.close();
    } catch { /* already closed */ }
    for (const cleanup of cleanups.splice(0)) cleanup();
  };
  const session: AgentSession = {
    push: (line) => {
      if (!ended) void send(line);
    },
    onClose: (fn) => {
      if (ended) fn();
      else cleanups.push(fn);
    },
    close: end,
  };
  let buffered = "";
  try {
    for await (const chunk of conn.readable) {
      buffered += decoder.decode(chunk, { stream: true });
      if (buffered.length > 1 << 20) throw new Error("request line too long");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        await send(await handle(line, session));
      }
    }
  } catch {
    // a client that went away or sent garbage: drop only its connection
  } finally {
    end();
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

/**
 * Binds `socket` so that no one but its owner can reach it at any moment: the bind happens in
 * a fresh 0700 directory beside it (whatever the umask, nobody else can reach into it), the
 * socket gets 0600 there and only then is renamed to its name.
 */
async function listenPrivately(
  socket: string,
  listen: (path: string) => Deno.UnixListener,
): Promise<Deno.UnixListener> {
  const parent = socket.slice(0, socket.lastIndexOf("/")) || "/";
  const name = socket.slice(socket.lastIndexOf("/") + 1);
  const dir = await Deno.makeTempDir({ dir: parent, prefix: `.${name}.` });
  try {
    await Deno.chmod(dir, 0o700);
    const listener = listen(`${dir}/${name}`);
    try {
      await Deno.chmod(`${dir}/${name}`, 0o600);
      await Deno.rename(`${dir}/${name}`, socket);
    } catch (error) {
      listener.close();
      throw error;
    }
    return listener;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Starts the agent on its socket (mode 0600: only its owner, root, may connect). */
export async function serveCgroupAgent(
  options: CgroupAgentOptions,
): Promise<CgroupAgent> {
  const root = options.root ?? "";
  const version = await denoCgroupTreeFs.exists(
      `${root}${CGROUP_MOUNT}/cgroup.controllers`,
    )
    ? "v2"
    : "v1";
  const scope = agentScope(options, version);
  try {
    if ((await Deno.lstat(options.socket)).isSocket) {
      await Deno.remove(options.socket);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const listener = await listenPrivately(
    options.socket,
    options.listen ??
      ((path) => Deno.listen({ transport: "unix", path })),
  );
  const onError = options.onError ?? (() => {});
  const fs = options.fs ?? denoCgroupTreeFs;
  const kubeletRoot = options.rootDir ??
    (options.socket.slice(0, options.socket.lastIndexOf("/")) || "/");
  const tmpfs = volumeTmpfsExecutor(kubeletRoot);
  const subPaths = subPathBindExecutor(kubeletRoot);
  const localBlock = localBlockExecutor(kubeletRoot);
  const rootShare = rootShareExecutor(kubeletRoot);
  let systemd: SystemdUnits | undefined;
  let slices = options.slices;
  if (!slices && scope.driver === "systemd") {
    systemd = reconnectingSystemd(() => connectSystemd());
    slices = systemdSlices(systemd);
  }
  const logind = options.logind ?? logindRelay();
  const executors = {
    fs,
    root,
    scope,
    tmpfs,
    localBlock,
    subPaths,
    rootShare,
    slices,
    logind,
  };
  const handle = (line: string, session: AgentSession) =>
    answer(executors, line, onError, session);
  const open = new Map<Deno.Conn, Promise<void>>();
  const finished = (async () => {
    try {
      for await (const conn of listener) {
        open.set(
          conn,
          serveConnection(conn, handle).finally(() => open.delete(conn)),
        );
      }
    } catch {
      // the listener was closed
    }
    await Promise.all(open.values());
  })();
  return {
    scope,
    close: () => {
      try {
        listener.close();
      } catch { /* already closed */ }
      for (const conn of open.keys()) {
        try {
          conn.close();
        } catch { /* already closed */ }
      }
      systemd?.close();
      logind.close();
    },
    finished,
  };
}
