// Command staticpod is the test oracle for kubelet.ts's static pod reader: it reads manifests
// the way the upstream kubelet's file and URL sources do (pkg/kubelet/config: tryDecodeSinglePod,
// tryDecodePodList, applyDefaults) by calling upstream's own exported functions, and prints the
// outcome as JSON. It also emits the Go type table the TypeScript side is generated from.
//
//	staticpod batch      JSON lines in ({data, source: "file"|"url", path, node}), JSON lines out
//	staticpod types      the Go type table of core.Pod and v1.Pod as JSON
//
// Test-only: nothing here ships.
package main

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/helper"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/features"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
	"k8s.io/kubernetes/pkg/util/hash"
)

type request struct {
	Data   string `json:"data"`
	Source string `json:"source"` // "file" or "url"
	Path   string `json:"path"`   // file path or URL
	Node   string `json:"node"`
}

type fieldError struct {
	Type   string `json:"type"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

type answer struct {
	OK bool `json:"ok"`
	// Class of the failure: yaml, decode, notPod, noName, validation, apiReference.
	Class  string       `json:"class,omitempty"`
	Error  string       `json:"error,omitempty"`
	Fields []fieldError `json:"fields,omitempty"`
	UIDs   []string     `json:"uids,omitempty"`
	Hashed []string     `json:"hashed,omitempty"`
	Pods   []*v1.Pod    `json:"pods,omitempty"`
}

type failure struct {
	class  string
	err    error
	fields field.ErrorList
}

func (f *failure) Error() string { return f.err.Error() }

// applyDefaults mirrors pkg/kubelet/config applyDefaults; it also records the text hashed.
func applyDefaults(pod *api.Pod, source string, isFile bool, nodeName types.NodeName, hashed *[]string) {
	if len(pod.UID) == 0 {
		text := dump.ForHash(pod)
		*hashed = append(*hashed, text)
		hasher := md5.New()
		hash.DeepHashObject(hasher, pod)
		if isFile {
			fmt.Fprintf(hasher, "host:%s", nodeName)
			fmt.Fprintf(hasher, "file:%s", source)
		} else {
			fmt.Fprintf(hasher, "url:%s", source)
		}
		pod.UID = types.UID(hex.EncodeToString(hasher.Sum(nil)))
	}
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(string(nodeName)))
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = string(nodeName)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubetypes.ConfigHashAnnotationKey] = string(pod.UID)
	if isFile {
		helper.AddOrUpdateTolerationInPod(pod, &api.Toleration{Operator: "Exists", Effect: api.TaintEffectNoExecute})
	}
	pod.Status.Phase = api.PodPending
}

// checkPod runs what tryDecodeSinglePod/tryDecodePodList run after decoding: name, defaults,
// ValidatePodCreate, the API reference check.
func checkPod(pod *api.Pod, defaults func(*api.Pod)) *failure {
	if pod.Name == "" {
		return &failure{class: "noName", err: fmt.Errorf("invalid pod: name is needed for the pod")}
	}
	defaults(pod)
	if errs := validation.ValidatePodCreate(pod, validation.PodValidationOptions{}); len(errs) > 0 {
		return &failure{class: "validation", err: fmt.Errorf("invalid pod: %v", errs), fields: errs}
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.PreventStaticPodAPIReferences) {
		_, resource, err := podutil.HasAPIObjectReference(pod)
		if err != nil {
			return &failure{class: "apiReference", err: err}
		}
		if resource != "" {
			return &failure{class: "apiReference", err: fmt.Errorf("static pods may not reference %s", resource)}
		}
	}
	return nil
}

func decodeSingle(data []byte, defaults func(*api.Pod)) (bool, *v1.Pod, *failure) {
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return false, nil, &failure{class: "yaml", err: err}
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), js)
	if err != nil {
		return false, nil, &failure{class: "decode", err: err}
	}
	pod, ok := obj.(*api.Pod)
	if !ok {
		return false, nil, &failure{class: "notPod", err: fmt.Errorf("invalid pod: %T", obj)}
	}
	if f := checkPod(pod, defaults); f != nil {
		return true, nil, f
	}
	out := &v1.Pod{}
	if err := k8sv1.Convert_core_Pod_To_v1_Pod(pod, out, nil); err != nil {
		return true, nil, &failure{class: "convert", err: err}
	}
	return true, out, nil
}

func decodeList(data []byte, defaults func(*api.Pod)) (bool, []*v1.Pod, *failure) {
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		return false, nil, &failure{class: "decode", err: err}
	}
	list, ok := obj.(*api.PodList)
	if !ok {
		return false, nil, &failure{class: "notPod", err: fmt.Errorf("invalid pods list: %T", obj)}
	}
	for i := range list.Items {
		if f := checkPod(&list.Items[i], defaults); f != nil {
			return true, nil, f
		}
	}
	out := &v1.PodList{}
	if err := k8sv1.Convert_core_PodList_To_v1_PodList(list, out, nil); err != nil {
		return true, nil, &failure{class: "convert", err: err}
	}
	pods := make([]*v1.Pod, len(out.Items))
	for i := range out.Items {
		pods[i] = &out.Items[i]
	}
	return true, pods, nil
}

func answerFor(r request) answer {
	var hashed []string
	isFile := r.Source != "url"
	defaults := func(p *api.Pod) { applyDefaults(p, r.Path, isFile, types.NodeName(r.Node), &hashed) }
	data := []byte(r.Data)
	var pods []*v1.Pod
	var fail *failure
	if isFile {
		parsed, pod, f := decodeSingle(data, defaults)
		if f != nil && !parsed {
			f.err = fmt.Errorf("%v: couldn't parse as pod(%v), please check config file", r.Path, f.err)
		}
		fail = f
		if pod != nil {
			pods = []*v1.Pod{pod}
		}
	} else if len(data) == 0 {
		fail = &failure{class: "empty", err: fmt.Errorf("zero-length data received from %v", r.Path)}
	} else {
		parsed, pod, f := decodeSingle(data, defaults)
		if parsed {
			fail = f
			if pod != nil {
				pods = []*v1.Pod{pod}
			}
		} else {
			hashed = nil
			parsedList, list, fl := decodeList(data, defaults)
			if parsedList {
				fail = fl
				pods = list
			} else {
				fail = &failure{class: f.class, err: fmt.Errorf("%v: received '%v', but couldn't parse as single (%v) or multiple pods (%v)", r.Path, r.Data, f.err, fl.err)}
			}
		}
	}
	if fail != nil {
		a := answer{Class: fail.class, Error: fail.Error(), Hashed: hashed}
		for _, e := range fail.fields {
			a.Fields = append(a.Fields, fieldError{Type: string(e.Type), Field: e.Field, Detail: e.Detail})
		}
		return a
	}
	a := answer{OK: true, Pods: pods, Hashed: hashed}
	for _, p := range pods {
		a.UIDs = append(a.UIDs, string(p.UID))
	}
	return a
}

func batch() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fmt.Fprintf(os.Stderr, "staticpod: bad request line: %v\n", err)
			os.Exit(2)
		}
		if err := enc.Encode(answerFor(r)); err != nil {
			panic(err)
		}
		out.Flush()
	}
}

func main() {
	// The kubelet allows privileged containers (cmd/kubelet/app RunKubelet), which
	// ValidatePodCreate consults through the process-wide capabilities.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: staticpod batch|types")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "batch":
		batch()
	case "types":
		emitTypes()
	default:
		fmt.Fprintln(os.Stderr, "usage: staticpod batch|types")
		os.Exit(2)
	}
}
