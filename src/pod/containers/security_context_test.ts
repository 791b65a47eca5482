import assert from "node:assert/strict";
import {
  appArmorProfile,
  containerSecurityContext,
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  effectiveSecurityContext,
  sandboxSecurityContext,
  seccompProfile,
} from "./security_context.ts";
import { ContainerConfigError } from "../env/container_env.ts";
import type { Container, Pod } from "../types.ts";

function pod(
  spec: Partial<Pod["spec"]> = {},
  container: Partial<Container> = {},
): Pod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "u-1" },
    spec: {
      containers: [{ name: "app", image: "busybox", ...container }],
      ...spec,
    },
  };
}

function csc(p: Pod, options = {}) {
  return containerSecurityContext(p, p.spec.containers[0]!, options);
}

Deno.test("effectiveSecurityContext() puts the container's fields over the pod's", () => {
  const p = pod(
    {
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 2000,
        runAsNonRoot: true,
        seLinuxOptions: { level: "s0:c1" },
        fsGroup: 3000,
      },
    },
    { securityContext: { runAsUser: 1001, privileged: false } },
  );
  assert.deepEqual(effectiveSecurityContext(p, p.spec.containers[0]!), {
    runAsUser: 1001,
    runAsGroup: 2000,
    runAsNonRoot: true,
    seLinuxOptions: { level: "s0:c1" },
    privileged: false,
  });
});

Deno.test("containerSecurityContext() maps user, group, groups, fsGroup and the policy", () => {
  const p = pod({
    securityContext: {
      runAsUser: 1000,
      runAsGroup: 2000,
      supplementalGroups: [4000, 5000],
      fsGroup: 3000,
      supplementalGroupsPolicy: "Strict",
    },
  });
  const sc = csc(p, { imageUser: { uid: 0n } });
  assert.deepEqual(sc.runAsUser, { value: 1000n });
  assert.deepEqual(sc.runAsGroup, { value: 2000n });
  // upstream appends fsGroup first, then the supplemental groups
  assert.deepEqual(sc.supplementalGroups, [3000n, 4000n, 5000n]);
  assert.equal(sc.supplementalGroupsPolicy, 1);
  assert.equal(sc.runAsUsername, undefined);
});

Deno.test("containerSecurityContext() runs as the image's user when no runAsUser is set", () => {
  assert.deepEqual(csc(pod(), { imageUser: { uid: 65534n } }).runAsUser, {
    value: 65534n,
  });
  const named = csc(pod(), { imageUser: { username: "www" } });
  assert.equal(named.runAsUser, undefined);
  assert.equal(named.runAsUsername, "www");
  assert.equal(csc(pod()).runAsUser, undefined);
});

Deno.test("containerSecurityContext() refuses root under runAsNonRoot with upstream's messages", () => {
  const strict = { securityContext: { runAsNonRoot: true } };
  assert.throws(
    () => csc(pod(strict), { imageUser: { uid: 0n } }),
    {
      message:
        'container has runAsNonRoot and image will run as root (pod: "web_prod(u-1)", container: app)',
    },
  );
  assert.throws(
    () => csc(pod(strict), { imageUser: { username: "nginx" } }),
    /image has non-numeric user \(nginx\), cannot verify user is non-root/,
  );
  assert.throws(
    () =>
      csc(pod(strict, { securityContext: { runAsUser: 0 } }), {
        imageUser: { uid: 1000n },
      }),
    /container's runAsUser breaks non-root policy/,
  );
  // the container's runAsNonRoot: false relaxes the pod's
  const relaxed = pod(strict, { securityContext: { runAsNonRoot: false } });
  assert.deepEqual(csc(relaxed, { imageUser: { uid: 0n } }).runAsUser, {
    value: 0n,
  });
  assert.deepEqual(csc(pod(strict), { imageUser: { uid: 10n } }).runAsUser, {
    value: 10n,
  });
});

Deno.test("containerSecurityContext() maps privileged, capabilities, read-only root and no_new_privs", () => {
  const sc = csc(pod({}, {
    securityContext: {
      privileged: true,
      capabilities: { add: ["NET_ADMIN"], drop: ["CHOWN", "ALL"] },
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    },
  }));
  assert.equal(sc.privileged, true);
  assert.deepEqual(sc.capabilities, {
    addCapabilities: ["NET_ADMIN"],
    dropCapabilities: ["CHOWN", "ALL"],
  });
  assert.equal(sc.readonlyRootfs, true);
  assert.equal(sc.noNewPrivs, true);
  const plain = csc(pod());
  assert.equal(plain.privileged, false);
  assert.equal(plain.capabilities, undefined);
  assert.equal(plain.readonlyRootfs, false);
  // only an explicit false sets no_new_privs (upstream AddNoNewPrivileges)
  assert.equal(plain.noNewPrivs, false);
  assert.equal(
    csc(pod({}, { securityContext: { allowPrivilegeEscalation: true } }))
      .noNewPrivs,
    false,
  );
});

Deno.test("containerSecurityContext() masks /proc unless procMount is Unmasked, privileged or not", () => {
  const plain = csc(pod());
  assert.deepEqual(plain.maskedPaths, DEFAULT_MASKED_PATHS);
  assert.deepEqual(plain.readonlyPaths, DEFAULT_READONLY_PATHS);
  // the runtime drops them for privileged containers; upstream sends them all the same
  const privileged = csc(pod({}, { securityContext: { privileged: true } }));
  assert.deepEqual(privileged.maskedPaths, DEFAULT_MASKED_PATHS);
  const unmasked = csc(pod({}, { securityContext: { procMount: "Unmasked" } }));
  assert.deepEqual(unmasked.maskedPaths, []);
  assert.deepEqual(unmasked.readonlyPaths, []);
});

Deno.test("containerSecurityContext() maps host namespaces and shareProcessNamespace", () => {
  assert.deepEqual(csc(pod()).namespaceOptions, {
    usernsOptions: { mode: 2 },
    network: 0,
    pid: 1,
    ipc: 0,
  });
  assert.deepEqual(
    csc(pod({ hostNetwork: true, hostPID: true, hostIPC: true }))
      .namespaceOptions,
    { usernsOptions: { mode: 2 }, network: 2, pid: 2, ipc: 2 },
  );
  assert.equal(
    csc(pod({ shareProcessNamespace: true })).namespaceOptions?.pid,
    0,
  );
});

Deno.test("containerSecurityContext() joins an ephemeral container's target process namespace unless the pod shares one", () => {
  assert.deepEqual(csc(pod(), { targetContainerId: "abc" }).namespaceOptions, {
    usernsOptions: { mode: 2 },
    network: 0,
    pid: 3,
    ipc: 0,
    targetId: "abc",
  });
  const shared = csc(pod({ shareProcessNamespace: true }), {
    targetContainerId: "abc",
  }).namespaceOptions;
  assert.equal(shared?.pid, 0);
  assert.equal(shared?.targetId, undefined);
});

Deno.test("containerSecurityContext() maps SELinux options from the container over the pod", () => {
  const p = pod(
    { securityContext: { seLinuxOptions: { level: "s0:c1,c2" } } },
    { securityContext: { seLinuxOptions: { type: "spc_t" } } },
  );
  assert.deepEqual(csc(p).selinuxOptions, {
    user: "",
    role: "",
    type: "spc_t",
    level: "",
  });
  assert.equal(csc(pod()).selinuxOptions, undefined);
});

Deno.test("seccompProfile() prefers the container, then the pod, then seccompDefault", () => {
  const c = (p: Pod, o = {}) => seccompProfile(p, p.spec.containers[0]!, o);
  assert.deepEqual(c(pod()), { profileType: 1 });
  assert.deepEqual(c(pod(), { seccompDefault: true }), { profileType: 0 });
  const podLevel = pod({
    securityContext: { seccompProfile: { type: "RuntimeDefault" } },
  });
  assert.deepEqual(c(podLevel), { profileType: 0 });
  const both = pod(
    { securityContext: { seccompProfile: { type: "RuntimeDefault" } } },
    {
      securityContext: {
        seccompProfile: { type: "Localhost", localhostProfile: "audit.json" },
      },
    },
  );
  assert.deepEqual(c(both, { seccompProfileRoot: "/var/lib/k/seccomp" }), {
    profileType: 2,
    localhostRef: "/var/lib/k/seccomp/audit.json",
  });
  const unconfined = pod({}, {
    securityContext: { seccompProfile: { type: "Unconfined" } },
  });
  assert.deepEqual(c(unconfined, { seccompDefault: true }), { profileType: 1 });
  assert.throws(
    () =>
      c(pod({}, {
        securityContext: { seccompProfile: { type: "Localhost" } },
      })),
    (e: unknown) =>
      e instanceof ContainerConfigError &&
      e.field === "spec.containers[0].securityContext.seccompProfile" &&
      /localhostProfile must be set/.test(e.message),
  );
});

Deno.test("appArmorProfile() maps the fields and the deprecated annotation with both forms", () => {
  const a = (p: Pod) => appArmorProfile(p, p.spec.containers[0]!);
  assert.equal(a(pod()), undefined);
  assert.deepEqual(
    a(pod({
      securityContext: { appArmorProfile: { type: "RuntimeDefault" } },
    })),
    { apparmor: { profileType: 0 }, apparmorProfile: "runtime/default" },
  );
  assert.deepEqual(
    a(pod({}, {
      securityContext: {
        appArmorProfile: { type: "Localhost", localhostProfile: "k8s-deny" },
      },
    })),
    {
      apparmor: { profileType: 2, localhostRef: "k8s-deny" },
      apparmorProfile: "localhost/k8s-deny",
    },
  );
  const annotated = pod();
  annotated.metadata.annotations = {
    "container.apparmor.security.beta.kubernetes.io/app": "unconfined",
  };
  assert.deepEqual(a(annotated), {
    apparmor: { profileType: 1 },
    apparmorProfile: "unconfined",
  });
  assert.throws(
    () =>
      a(pod({}, {
        securityContext: { appArmorProfile: { type: "Localhost" } },
      })),
    /missing localhost apparmor profile name/,
  );
});

Deno.test("sandboxSecurityContext() carries the pod's settings and RuntimeDefault seccomp", () => {
  const p = pod({
    hostNetwork: true,
    securityContext: {
      runAsUser: 1000,
      runAsGroup: 2000,
      fsGroup: 3000,
      supplementalGroups: [4000],
      seccompProfile: { type: "Unconfined" },
    },
    initContainers: [{
      name: "setup",
      securityContext: { privileged: true },
    }],
  });
  const sc = sandboxSecurityContext(p);
  assert.deepEqual(sc.runAsUser, { value: 1000n });
  assert.deepEqual(sc.runAsGroup, { value: 2000n });
  assert.deepEqual(sc.supplementalGroups, [3000n, 4000n]);
  assert.equal(sc.privileged, true);
  assert.deepEqual(sc.seccomp, { profileType: 0 });
  assert.equal(sc.namespaceOptions?.network, 2);
  assert.equal(sandboxSecurityContext(pod()).privileged, false);
  assert.equal(
    sandboxSecurityContext(pod({
      ephemeralContainers: [{
        name: "debug",
        securityContext: { privileged: true },
      }],
    })).privileged,
    true,
  );
});
