/** Test doubles of the API area: the in-memory API server. */
export { applyMergePatch, FakeApiServer } from "./fake_api_server.ts";
/** The in-memory pod API (list/watch with 410 and disconnects, status patches, deletes). */
export { FakePodApi } from "./fake_pod_api.ts";
/** A shell-script exec credential plugin and the kubeconfig that runs it. */
export {
  EXEC_PLUGIN_API_VERSION,
  writeExecPlugin,
} from "./fake_exec_plugin.ts";
