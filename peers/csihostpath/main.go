// Command csihostpath is a CSI plugin for the kubelet tests: it serves the CSI Identity, Node
// and Controller (create and delete only) services on one unix socket and the kubelet plugin registration service on another (the
// part node-driver-registrar plays), keeps each volume's data in <data-dir>/<volume id> and
// bind-mounts it at the publish target, as csi-driver-host-path does for filesystem volumes.
// Every call is appended to a JSON-lines log so a test can compare what two kubelets asked.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type plugin struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedNodeServer
	csi.UnimplementedControllerServer
	registration.UnimplementedRegistrationServer

	name, nodeID, dataDir, csiSocket string
	stage                            bool
	logMu                            sync.Mutex
	logFile                          *os.File
}

// record appends one call to the call log.
func (p *plugin) record(method string, req any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	var msg proto.Message
	switch m := req.(type) {
	case proto.Message:
		msg = m
	case protoadapt.MessageV1:
		msg = protoadapt.MessageV2Of(m)
	}
	body, _ := protojson.Marshal(msg)
	line, _ := json.Marshal(map[string]any{
		"time":    time.Now().UTC().Format(time.RFC3339Nano),
		"method":  method,
		"request": json.RawMessage(body),
	})
	if p.logFile != nil {
		_, _ = p.logFile.Write(append(line, '\n'))
	}
	log.Printf("%s %s", method, body)
}

func (p *plugin) GetPluginInfo(_ context.Context, req *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	p.record("GetPluginInfo", req)
	return &csi.GetPluginInfoResponse{Name: p.name, VendorVersion: "kubelet-ts-test"}, nil
}

func (p *plugin) GetPluginCapabilities(_ context.Context, req *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	p.record("GetPluginCapabilities", req)
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{
			Type: csi.PluginCapability_Service_CONTROLLER_SERVICE,
		}},
	}}}, nil
}

// ControllerGetCapabilities: volumes are created and deleted (dynamic provisioning); there is
// no attach, so a CSIDriver with attachRequired: false fits.
func (p *plugin) ControllerGetCapabilities(_ context.Context, req *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	p.record("ControllerGetCapabilities", req)
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{
			Type: csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		}},
	}}}, nil
}

// CreateVolume makes <data-dir>/<name>; the volume id is the name the provisioner chose.
func (p *plugin) CreateVolume(_ context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	p.record("CreateVolume", req)
	if req.GetName() == "" || len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "name and volume capabilities are required")
	}
	if err := os.MkdirAll(filepath.Join(p.dataDir, req.GetName()), 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:      req.GetName(),
		CapacityBytes: req.GetCapacityRange().GetRequiredBytes(),
		VolumeContext: req.GetParameters(),
	}}, nil
}

func (p *plugin) DeleteVolume(_ context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	p.record("DeleteVolume", req)
	if req.GetVolumeId() == "" || filepath.Base(req.GetVolumeId()) != req.GetVolumeId() {
		return nil, status.Error(codes.InvalidArgument, "a plain volume id is required")
	}
	if err := os.RemoveAll(filepath.Join(p.dataDir, req.GetVolumeId())); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (p *plugin) Probe(_ context.Context, req *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	p.record("Probe", req)
	return &csi.ProbeResponse{}, nil
}

func (p *plugin) NodeGetInfo(_ context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	p.record("NodeGetInfo", req)
	return &csi.NodeGetInfoResponse{
		NodeId:             p.nodeID,
		AccessibleTopology: &csi.Topology{Segments: map[string]string{"topology.hostpath.csi/node": p.nodeID}},
	}, nil
}

func rpcCapability(t csi.NodeServiceCapability_RPC_Type) *csi.NodeServiceCapability {
	return &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}}
}

func (p *plugin) NodeGetCapabilities(_ context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	p.record("NodeGetCapabilities", req)
	caps := []*csi.NodeServiceCapability{rpcCapability(csi.NodeServiceCapability_RPC_SINGLE_NODE_MULTI_WRITER)}
	if p.stage {
		caps = append(caps, rpcCapability(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME))
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (p *plugin) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	p.record("NodeStageVolume", req)
	if req.GetVolumeId() == "" || req.GetStagingTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume id, staging target path and capability are required")
	}
	if st, err := os.Stat(req.GetStagingTargetPath()); err != nil || !st.IsDir() {
		return nil, status.Errorf(codes.FailedPrecondition, "staging target path %s is not a directory", req.GetStagingTargetPath())
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

func (p *plugin) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	p.record("NodeUnstageVolume", req)
	return &csi.NodeUnstageVolumeResponse{}, nil
}

func mounted(path string) bool {
	var here, parent unix.Stat_t
	if unix.Stat(path, &here) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return here.Dev != parent.Dev || here.Ino == parent.Ino
}

func bindMountedAt(target string) bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return mounted(target)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && fields[4] == target {
			return true
		}
	}
	return false
}

func (p *plugin) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	p.record("NodePublishVolume", req)
	if req.GetVolumeId() == "" || req.GetTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume id, target path and capability are required")
	}
	ephemeral := req.GetVolumeContext()["csi.storage.k8s.io/ephemeral"] == "true"
	if p.stage && !ephemeral && req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.FailedPrecondition, "the volume was not staged")
	}
	source := filepath.Join(p.dataDir, req.GetVolumeId())
	if err := os.MkdirAll(source, 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	_ = os.Chmod(source, 0o777)
	target := req.GetTargetPath()
	if bindMountedAt(target) {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind mount %s at %s: %v", source, target, err)
	}
	if req.GetReadonly() {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			_ = unix.Unmount(target, 0)
			return nil, status.Errorf(codes.Internal, "read-only remount of %s: %v", target, err)
		}
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

func (p *plugin) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	p.record("NodeUnpublishVolume", req)
	target := req.GetTargetPath()
	if bindMountedAt(target) {
		if err := unix.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (p *plugin) GetInfo(_ context.Context, req *registration.InfoRequest) (*registration.PluginInfo, error) {
	p.record("Registration.GetInfo", req)
	return &registration.PluginInfo{
		Type:              registration.CSIPlugin,
		Name:              p.name,
		Endpoint:          p.csiSocket,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (p *plugin) NotifyRegistrationStatus(_ context.Context, req *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	p.record("Registration.NotifyRegistrationStatus", req)
	return &registration.RegistrationStatusResponse{}, nil
}

func listen(path string) net.Listener {
	_ = os.MkdirAll(filepath.Dir(path), 0o750)
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		log.Fatalf("listen on %s: %v", path, err)
	}
	return l
}

func main() {
	p := &plugin{}
	var regSocket, callLog string
	flag.StringVar(&p.name, "driver-name", "hostpath.csi.k8s.io", "CSI driver name")
	flag.StringVar(&p.nodeID, "node-id", "", "node id NodeGetInfo reports")
	flag.StringVar(&p.dataDir, "data-dir", "/tmp/csi-hostpath-data", "where volume data lives")
	flag.StringVar(&p.csiSocket, "csi-socket", "", "CSI socket path")
	flag.StringVar(&regSocket, "registration-socket", "", "registration socket path (in <kubelet root>/plugins_registry)")
	flag.StringVar(&callLog, "call-log", "", "JSON-lines file every call is appended to")
	flag.BoolVar(&p.stage, "stage", true, "report STAGE_UNSTAGE_VOLUME")
	flag.Parse()
	if p.csiSocket == "" || regSocket == "" || p.nodeID == "" {
		log.Fatal("--csi-socket, --registration-socket and --node-id are required")
	}
	if callLog != "" {
		f, err := os.OpenFile(callLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		p.logFile = f
	}
	csiServer := grpc.NewServer()
	csi.RegisterIdentityServer(csiServer, p)
	csi.RegisterNodeServer(csiServer, p)
	csi.RegisterControllerServer(csiServer, p)
	go func() { _ = csiServer.Serve(listen(p.csiSocket)) }()
	// the registration socket appears once the CSI socket serves, as the registrar does it
	regServer := grpc.NewServer()
	registration.RegisterRegistrationServer(regServer, p)
	go func() { _ = regServer.Serve(listen(regSocket)) }()
	log.Printf("serving %s on %s, registration on %s", p.name, p.csiSocket, regSocket)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	regServer.Stop()
	csiServer.Stop()
	_ = os.Remove(regSocket)
	_ = os.Remove(p.csiSocket)
}
