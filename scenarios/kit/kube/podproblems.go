package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// hopelessReasons are the kubelet's reasons for a waiting container that
// waiting will not cure, or not within a suite's patience: an image that
// does not pull (the first ErrImagePull already says why; the kubelet
// only backs off after it), a bad image name or container config, a
// container that keeps crashing.
var hopelessReasons = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CrashLoopBackOff"}

// podProblem is why a pod's container cannot start, as the kubelet
// says it ("pod NS/NAME on NODE: REASON: MESSAGE"), or "".
func podProblem(p *corev1.Pod) (reason, message string) {
	statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
	for _, s := range statuses {
		if w := s.State.Waiting; w != nil && slices.Contains(hopelessReasons, w.Reason) {
			return w.Reason, w.Message
		}
	}
	return "", ""
}

// podProblems is the first pod of namespace ns whose container cannot
// start, as an error that stops a poll: "pod NS/NAME on NODE: REASON:
// MESSAGE", the message from the pod's latest Failed event when the
// status has none.
func (t *Target) podProblems(ctx context.Context, ns string) error {
	pods, err := t.clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		reason, message := podProblem(p)
		if reason == "" {
			continue
		}
		if message == "" {
			message = t.failedEvent(ctx, p)
		}
		node := p.Spec.NodeName
		if node == "" {
			node = "no node yet"
		}
		return stopPolling(fmt.Errorf("pod %s/%s on %s: %s: %s", p.Namespace, p.Name, node, reason, strings.TrimSpace(message)))
	}
	return nil
}

// failedEvent is the message of the pod's latest event with reason Failed
// (the kubelet's "Failed to pull image …"), or a note that there is none.
func (t *Target) failedEvent(ctx context.Context, p *corev1.Pod) string {
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": p.Name, "reason": "Failed"}.AsSelector().String()
	events, err := t.clientset.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return fmt.Sprintf("(the kubelet gave no message, and its events could not be read: %v)", err)
	}
	var latest *corev1.Event
	for i := range events.Items {
		e := &events.Items[i]
		if e.Reason == "Failed" && e.InvolvedObject.Name == p.Name && (latest == nil || eventTime(e).After(eventTime(latest))) {
			latest = e
		}
	}
	if latest == nil {
		return "(the kubelet gave no message and no Failed event)"
	}
	return latest.Message
}

// eventTime is when an event last happened, whichever field its source
// filled in.
func eventTime(e *corev1.Event) time.Time {
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
}

// failOnPodProblems wraps a poll's condition: before each check, a pod of
// namespace ns that cannot start stops the poll with the kubelet's
// reason, instead of the wait running into its timeout.
func (t *Target) failOnPodProblems(ctx context.Context, ns string, done func() (bool, error)) func() (bool, error) {
	return func() (bool, error) {
		if err := t.podProblems(ctx, ns); err != nil {
			return false, err
		}
		return done()
	}
}
