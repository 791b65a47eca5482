/**
 * systemd over D-Bus, spoken from TypeScript: the wire format, one connection to the system
 * bus and the manager calls a systemd cgroup driver needs (transient slices, their
 * properties, stopping them), and logind for graceful node shutdown (inhibit delay, the
 * inhibitor lock, `PrepareForShutdown`). Nothing here knows about pods or cgroup settings.
 *
 * @module
 */

export {
  connectDBus,
  type DBusCall,
  type DBusConnection,
  DBusDisconnectedError,
  DBusError,
  SYSTEM_BUS_SOCKET,
} from "./dbus_connection.ts";
export {
  type DBusMessage,
  type DBusValue,
  decodeMessage,
  encodeMessage,
  marshal,
  unmarshal,
  type Variant,
} from "./dbus_wire.ts";
export {
  cpuListBits,
  sliceComponents,
  slicePath,
  sliceResourceProperties,
  type SliceResources,
  type Slices,
  sliceStartProperties,
  type SliceUnit,
  sliceUnit,
  systemdSlices,
} from "./slices.ts";
export {
  connectSystemd,
  parseSystemdVersion,
  prop,
  reconnectingSystemd,
  type SystemdUnits,
  systemdUnits,
  type UnitProperty,
} from "./systemd_units.ts";
export {
  connectLogind,
  inhibitDelayDropIn,
  KUBELET_SHUTDOWN_INHIBIT,
  type Logind,
  logind,
  LOGIND_DROP_IN,
  type TakeInhibitLock,
  writeInhibitDelayDropIn,
} from "./logind.ts";
export {
  canReceiveUnixFds,
  type InhibitLock,
  type InhibitRequest,
  inhibitThroughFfi,
} from "./logind_inhibit_ffi.ts";
