/**
 * Access to the host's cgroup files: directly (a process with every Deno permission) or
 * through the cgroup agent (the kubelet under its planned lists). The agent's own entry point
 * is `main.ts`; see docs/permissions.md, "The cgroup agent".
 *
 * @module
 */

export {
  type CgroupTreeFs,
  denoCgroupTreeFs,
  type FilesystemFigures,
  readFilesystemFigures,
  readProcsBelow,
} from "./cgroup_fs.ts";
export { detectSwapController } from "./swap_controller.ts";
export {
  CGROUP_AGENT_SOCKET,
  type CgroupAgentClient,
  cgroupAgentClient,
  cgroupAgentSocket,
  openCgroupAgentClient,
} from "./client.ts";
export { agentLogind, agentWriteInhibitDelay } from "./logind_client.ts";
export {
  type AgentSession,
  type LogindRelay,
  logindRelay,
} from "./logind_relay.ts";
export {
  checkTmpfsTarget,
  parseMountInfo,
  TMPFS_VOLUME_PLUGINS,
  type TmpfsTarget,
} from "./volume_tmpfs.ts";
export {
  type VolumeTmpfsExecutor,
  volumeTmpfsExecutor,
} from "./volume_tmpfs_exec.ts";
export {
  type LocalBlockExecutor,
  localBlockExecutor,
} from "./volume_local_block_exec.ts";
export {
  type SubPathBindExecutor,
  subPathBindExecutor,
} from "./volume_subpath_exec.ts";
export {
  planRootShare,
  rootShareFix,
  type RootSharePlan,
} from "./root_shared.ts";
export {
  type RootShareAccess,
  type RootShareExecutor,
  rootShareExecutor,
} from "./root_shared_exec.ts";
