// criproxy is a test peer: a CRI proxy that sits between a kubelet and its container
// runtime, forwards every call unchanged and appends one JSON line per call to a trace file
// (method, request, response or error, start time and duration). The differential tests
// run the same scenario under kubelet.ts and the upstream kubelet, each behind its own
// criproxy, and compare the traces.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	// Registers the runtime.v1 messages and services for decoding.
	_ "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// rawCodec passes message bytes through untouched, so the proxy never re-encodes a call.
type rawCodec struct{}

type frame struct{ data []byte }

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, errors.New("criproxy: unexpected message type")
	}
	return f.data, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return errors.New("criproxy: unexpected message type")
	}
	f.data = append(f.data[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

type entry struct {
	Start      string            `json:"start"`
	DurationMs float64           `json:"durationMs"`
	Method     string            `json:"method"`
	Request    json.RawMessage   `json:"request,omitempty"`
	Response   json.RawMessage   `json:"response,omitempty"`
	Error      string            `json:"error,omitempty"`
	Stream     []json.RawMessage `json:"stream,omitempty"`
}

type recorder struct {
	mu  sync.Mutex
	out *os.File
}

func (r *recorder) write(e *entry) {
	line, err := json.Marshal(e)
	if err != nil {
		log.Printf("criproxy: encoding a trace entry: %v", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.out.Write(append(line, '\n'))
}

// decode renders one message of the given type as JSON, or a note when it cannot.
func decode(desc protoreflect.MessageDescriptor, data []byte) json.RawMessage {
	if desc == nil {
		return json.RawMessage(`{"undecoded":true}`)
	}
	var msg proto.Message
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(desc.FullName()); err == nil {
		msg = mt.New().Interface()
	} else {
		msg = dynamicpb.NewMessage(desc)
	}
	if err := proto.Unmarshal(data, msg); err != nil {
		return json.RawMessage(`{"undecodable":true}`)
	}
	js, err := protojson.MarshalOptions{UseProtoNames: false, EmitUnpopulated: false}.Marshal(msg)
	if err != nil {
		return json.RawMessage(`{"undecodable":true}`)
	}
	return js
}

// methodTypes looks up a full method name such as /runtime.v1.RuntimeService/Version.
func methodTypes(full string) (in, out protoreflect.MessageDescriptor) {
	parts := strings.Split(strings.TrimPrefix(full, "/"), "/")
	if len(parts) != 2 {
		return nil, nil
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(parts[0]))
	if err != nil {
		return nil, nil
	}
	svc, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, nil
	}
	m := svc.Methods().ByName(protoreflect.Name(parts[1]))
	if m == nil {
		return nil, nil
	}
	return m.Input(), m.Output()
}

type proxy struct {
	target *grpc.ClientConn
	rec    *recorder
}

// handle forwards one call of any kind: unary calls are streams of one message each way.
func (p *proxy) handle(_ any, server grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(server)
	if !ok {
		return status.Error(14, "criproxy: no method")
	}
	start := time.Now()
	inDesc, outDesc := methodTypes(method)
	e := &entry{Start: start.UTC().Format(time.RFC3339Nano), Method: method}
	defer func() {
		e.DurationMs = float64(time.Since(start).Microseconds()) / 1000
		p.rec.write(e)
	}()

	ctx, cancel := context.WithCancel(server.Context())
	defer cancel()
	client, err := p.target.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true},
		method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		e.Error = err.Error()
		return err
	}

	upErr := make(chan error, 1)
	go func() {
		for {
			f := &frame{}
			if err := server.RecvMsg(f); err != nil {
				if err == io.EOF {
					upErr <- client.CloseSend()
				} else {
					upErr <- err
				}
				return
			}
			if e.Request == nil {
				e.Request = decode(inDesc, f.data)
			}
			if err := client.SendMsg(f); err != nil {
				upErr <- err
				return
			}
		}
	}()

	if md, err := client.Header(); err == nil {
		_ = server.SendHeader(md)
	}
	count := 0
	for {
		f := &frame{}
		if err := client.RecvMsg(f); err != nil {
			server.SetTrailer(client.Trailer())
			if err == io.EOF {
				return nil
			}
			e.Error = err.Error()
			return err
		}
		js := decode(outDesc, f.data)
		if count == 0 {
			e.Response = js
		} else if len(e.Stream) < 1000 {
			e.Stream = append(e.Stream, js)
		}
		count++
		if err := server.SendMsg(f); err != nil {
			e.Error = err.Error()
			return err
		}
	}
}

func main() {
	listen := flag.String("listen", "", "unix socket path to serve CRI on")
	target := flag.String("target", "", "unix socket path of the real runtime")
	trace := flag.String("trace", "", "file to append one JSON line per call to")
	flag.Parse()
	if *listen == "" || *target == "" || *trace == "" {
		log.Fatal("criproxy: -listen, -target and -trace are required")
	}
	out, err := os.OpenFile(*trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatalf("criproxy: opening the trace file: %v", err)
	}
	conn, err := grpc.NewClient("unix://"+strings.TrimPrefix(*target, "unix://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		log.Fatalf("criproxy: dialling the runtime: %v", err)
	}
	path := strings.TrimPrefix(*listen, "unix://")
	_ = os.Remove(path)
	lis, err := net.Listen("unix", path)
	if err != nil {
		log.Fatalf("criproxy: listening: %v", err)
	}
	p := &proxy{target: conn, rec: &recorder{out: out}}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(p.handle), grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(64<<20), grpc.MaxSendMsgSize(64<<20))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
	}()
	log.Printf("criproxy: %s -> %s, trace %s", path, *target, *trace)
	if err := srv.Serve(lis); err != nil {
		log.Fatalf("criproxy: %v", err)
	}
	_ = out.Close()
}
