package workload

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/internal/labstore"
)

// TestHeadlessServiceAndPodHostnames: a headless Service gets no ClusterIP
// and a slice whose endpoint carries the hostname of the pod whose
// subdomain names it (what cluster DNS answers as db-0.db.<ns>.svc); a pod
// of another subdomain carries none.
func TestHeadlessServiceAndPodHostnames(t *testing.T) {
	st := mustApply(t, &labstore.State{}, `
apiVersion: v1
kind: Pod
metadata: {name: db-0, labels: {app: db}}
spec: {hostname: db-0, subdomain: db, containers: [{name: c, image: x, ports: [{containerPort: 5432}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db-x, labels: {app: db}}
spec: {hostname: db-x, subdomain: other, containers: [{name: c, image: x, ports: [{containerPort: 5432}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: db}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: pg, port: 5432}]}
`)
	svc := st.Service("default", "db")
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP %q, want None", svc.Spec.ClusterIP)
	}
	hostnames := map[string]string{}
	for _, e := range st.EndpointSlices[0].Endpoints {
		h := ""
		if e.Hostname != nil {
			h = *e.Hostname
		}
		hostnames[e.TargetRef.Name] = h
	}
	if hostnames["db-0"] != "db-0" || hostnames["db-x"] != "" || len(hostnames) != 2 {
		t.Errorf("endpoint hostnames %v, want db-0 for db-0 and none for db-x", hostnames)
	}
}

func TestPodHostnameIsALabel(t *testing.T) {
	m, err := Decode([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {hostname: Not_A_Label, containers: [{name: c, image: x}]}\n"), "h.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = lab.Apply(&labstore.State{}, m, "h.yaml")
	if err == nil || !strings.Contains(err.Error(), "spec.hostname") || !strings.Contains(err.Error(), "h.yaml") {
		t.Errorf("apply of hostname Not_A_Label: %v, want an error naming h.yaml and spec.hostname", err)
	}
}
