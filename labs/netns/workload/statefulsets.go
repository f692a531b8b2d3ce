package workload

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/internal/labstore"
)

// Labels the StatefulSet controller puts on its pods.
const (
	statefulSetPodNameLabel = appsv1.StatefulSetPodNameLabel        // statefulset.kubernetes.io/pod-name
	podIndexLabel           = appsv1.PodIndexLabel                  // apps.kubernetes.io/pod-index
	revisionLabel           = appsv1.ControllerRevisionHashLabelKey // controller-revision-hash
)

// applyStatefulSet validates a StatefulSet as the API server does and makes
// its pods <name>-0 … <name>-N-1 in order, each with hostname <pod> and
// subdomain spec.serviceName, so that the governing headless Service gives
// each one a stable DNS name (<pod>.<service>.<namespace>.svc).
func (c Cluster) applyStatefulSet(st *labstore.State, ss *appsv1.StatefulSet, source string) error {
	defaultNamespace(&ss.ObjectMeta)
	ctl := podController{kind: "StatefulSet", meta: ss.ObjectMeta, selector: ss.Spec.Selector, template: &ss.Spec.Template, replicas: &ss.Spec.Replicas}
	if err := ctl.validate(source); err != nil {
		return err
	}
	where := whereOf("StatefulSet", ss.ObjectMeta)
	if ss.Spec.ServiceName != "" {
		if msgs := validation.IsDNS1123Label(ss.Spec.ServiceName); len(msgs) > 0 {
			return errorf(source, "%s: spec.serviceName: Invalid value: %q: %s", where, ss.Spec.ServiceName, msgs[0])
		}
	}
	switch ss.Spec.PodManagementPolicy {
	case "":
		ss.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		return errorf(source, "%s: spec.podManagementPolicy: Unsupported value: %q: supported values: \"OrderedReady\", \"Parallel\"", where, ss.Spec.PodManagementPolicy)
	}
	if n := *ss.Spec.Replicas; n > 0 {
		// The pods are hosts of the lab: the last one's name must fit.
		if last := ss.Name + "-" + strconv.Itoa(int(n-1)); len(last) > MaxPodNameLen {
			return errorf(source, "%s: metadata.name: Too long: pod %s would have %d characters (a pod is a host of the lab: at most %d)", where, last, len(last), MaxPodNameLen)
		}
	}
	st.StatefulSets = replaceOrAdd(st.StatefulSets, ss, sameName[*appsv1.StatefulSet](ss.ObjectMeta))
	return c.reconcileStatefulSet(st, ss, source)
}

// reconcileStatefulSet makes pods 0 … N-1 that do not exist, lowest first
// (in a lab every pod is ready at once, so OrderedReady and Parallel make
// the same pods), and removes those of ordinal N and above, highest first.
// A pod whose name is still held by a terminating pod is made once that
// one is gone (the next command that finds it finished), as upstream waits
// for it.
func (c Cluster) reconcileStatefulSet(st *labstore.State, ss *appsv1.StatefulSet, source string) error {
	ensureUID("StatefulSet", &ss.ObjectMeta)
	revision := ss.Name + "-" + hashOf(ss.Spec.Template)
	live, _ := ownedPods(st, "StatefulSet", ss.ObjectMeta)
	n := int(*ss.Spec.Replicas)
	for _, p := range live {
		if i, ok := ordinalOf(ss.Name, p.Name); !ok || i >= n {
			removePods(st, livePod(p))
		}
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", ss.Name, i)
		if st.Pod(name) != nil {
			continue // running, or terminating: made again once it is gone
		}
		pod := newPod("StatefulSet", ss.ObjectMeta, &ss.Spec.Template, name, map[string]string{
			statefulSetPodNameLabel: name,
			podIndexLabel:           strconv.Itoa(i),
			revisionLabel:           revision,
		})
		pod.Spec.Hostname = name
		pod.Spec.Subdomain = ss.Spec.ServiceName
		if err := c.applyPod(st, pod, source); err != nil {
			return err
		}
	}
	return nil
}

func livePod(p *corev1.Pod) []*corev1.Pod { return []*corev1.Pod{p} }

// ordinalOf parses <set>-<ordinal>.
func ordinalOf(set, pod string) (int, bool) {
	if len(pod) <= len(set)+1 || pod[:len(set)+1] != set+"-" {
		return 0, false
	}
	i, err := strconv.Atoi(pod[len(set)+1:])
	return i, err == nil && i >= 0
}
