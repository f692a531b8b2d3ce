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

// TestExternalNameService: stored without a cluster IP or endpoints (its
// name is a CNAME in cluster DNS); a bad externalName or a cluster IP is
// refused as the API server refuses them.
func TestExternalNameService(t *testing.T) {
	st := mustApply(t, &labstore.State{}, `
apiVersion: v1
kind: Service
metadata: {name: search}
spec: {type: ExternalName, externalName: search.example.com}
`)
	svc := st.Service("default", "search")
	if svc == nil || svc.Spec.ClusterIP != "" || len(st.EndpointSlices) != 0 {
		t.Fatalf("ExternalName: %+v, slices %d", svc, len(st.EndpointSlices))
	}
	for _, bad := range []struct{ spec, want string }{
		{"{type: ExternalName, externalName: 'not a name'}", "spec.externalName"},
		{"{type: ExternalName, externalName: a.example, clusterIP: 10.254.0.50}", "spec.clusterIP"},
	} {
		m, err := Decode([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: "+bad.spec+"\n"), "x.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lab.Apply(&labstore.State{}, m, "x.yaml"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error naming %s", bad.spec, err, bad.want)
		}
	}
}
