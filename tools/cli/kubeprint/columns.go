package kubeprint

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// rowFunc is one object's table row (its cells; wide adds the priority-1
// columns), as the API server's printer of that kind makes it.
type rowFunc func(obj runtime.Object, wide bool, now time.Time) []any

// kindPrinter is a kind's columns and its row function.
type kindPrinter struct {
	columns []metav1.TableColumnDefinition
	row     rowFunc
}

func col(name string, priority int32) metav1.TableColumnDefinition {
	c := metav1.TableColumnDefinition{Name: name, Type: "string", Priority: priority}
	if name == "Name" {
		c.Format = "name"
	}
	return c
}

func cols(normal []string, wide ...string) []metav1.TableColumnDefinition {
	var out []metav1.TableColumnDefinition
	for _, n := range normal {
		out = append(out, col(n, 0))
	}
	for _, n := range wide {
		out = append(out, col(n, 1))
	}
	return out
}

// printerFor returns the columns and row function of obj's kind. A new
// kind is one entry here and one row function.
func printerFor(obj runtime.Object) (kindPrinter, error) {
	switch obj.(type) {
	case *corev1.Pod:
		return kindPrinter{cols([]string{"Name", "Ready", "Status", "Restarts", "Age"}, "IP", "Node", "Nominated Node", "Readiness Gates"), podRow}, nil
	case *corev1.Service:
		return kindPrinter{cols([]string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"}, "Selector"), serviceRow}, nil
	case *discoveryv1.EndpointSlice:
		return kindPrinter{cols([]string{"Name", "AddressType", "Ports", "Endpoints", "Age"}), endpointSliceRow}, nil
	case *corev1.ConfigMap:
		return kindPrinter{cols([]string{"Name", "Data", "Age"}), configMapRow}, nil
	case *corev1.Namespace:
		return kindPrinter{cols([]string{"Name", "Status", "Age"}), namespaceRow}, nil
	case *corev1.Node:
		return kindPrinter{cols([]string{"Name", "Status", "Roles", "Age", "Version"}, "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"), nodeRow}, nil
	case *appsv1.Deployment:
		return kindPrinter{cols([]string{"Name", "Ready", "Up-to-date", "Available", "Age"}, "Containers", "Images", "Selector"), deploymentRow}, nil
	case *appsv1.ReplicaSet:
		return kindPrinter{cols([]string{"Name", "Desired", "Current", "Ready", "Age"}, "Containers", "Images", "Selector"), replicaSetRow}, nil
	case *appsv1.StatefulSet:
		return kindPrinter{cols([]string{"Name", "Ready", "Age"}, "Containers", "Images"), statefulSetRow}, nil
	case *appsv1.DaemonSet:
		return kindPrinter{cols([]string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"}, "Containers", "Images", "Selector"), daemonSetRow}, nil
	}
	return kindPrinter{}, fmt.Errorf("kubeprint: no table printer for %T", obj)
}
