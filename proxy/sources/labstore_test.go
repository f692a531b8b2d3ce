package sources

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/svclab/svclab/internal/labstore"
)

func TestLabStoreNotifiesOnEveryWrite(t *testing.T) {
	st := labstore.OpenDir(t.TempDir())
	src := &LabStore{Store: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 10)
	if err := src.Run(ctx, func() { changed <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	if _, err := st.WriteObjects(&labstore.State{Services: []*corev1.Service{svc}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(3 * time.Second):
		t.Fatal("no change notification within 3s of a write")
	}
	objs, err := src.List()
	if err != nil || len(objs.Services) != 1 || objs.Generation != 1 {
		t.Fatalf("List after the write: %+v, %v", objs, err)
	}
}

// TestLabStoreChangesNameOnlyWhatChanged: after a write that changes one
// Service and deletes another, Changes holds exactly those two (the
// deleted one as nil), read from their files alone.
func TestLabStoreChangesNameOnlyWhatChanged(t *testing.T) {
	st := labstore.OpenDir(t.TempDir())
	src := &LabStore{Store: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 10)
	if err := src.Run(ctx, func() { changed <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	svc := func(name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
	}
	write := func(svcs ...*corev1.Service) {
		t.Helper()
		if _, err := st.WriteObjects(&labstore.State{Services: svcs}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(3 * time.Second):
			t.Fatal("no change notification within 3s of a write")
		}
	}
	write(svc("a", "10.96.0.1"), svc("b", "10.96.0.2"), svc("c", "10.96.0.3"))
	if _, err := src.List(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Changes(); err != nil { // what the List already holds
		t.Fatal(err)
	}
	write(svc("a", "10.96.0.1"), svc("b", "10.96.0.22"))
	c, err := src.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if c.Lost || len(c.EndpointSlices) != 0 || len(c.Services) != 2 {
		t.Fatalf("Changes = %+v, want b and c only", c)
	}
	if b := c.Services[Key{"default", "b"}]; b == nil || b.Spec.ClusterIP != "10.96.0.22" {
		t.Errorf("b = %+v, want its new cluster IP", b)
	}
	if gone, ok := c.Services[Key{"default", "c"}]; !ok || gone != nil {
		t.Errorf("c = %v (present %v), want a deletion", gone, ok)
	}
	if c.Generation != 2 {
		t.Errorf("generation %d, want 2", c.Generation)
	}
}

// TestLabStoreNotifiesAfterEveryFileOfAWrite: when the notification for a
// write of many objects comes, Changes holds all of them with the write's
// generation (the loop reports that generation as synced).
func TestLabStoreNotifiesAfterEveryFileOfAWrite(t *testing.T) {
	st := labstore.OpenDir(t.TempDir())
	src := &LabStore{Store: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 1000)
	if err := src.Run(ctx, func() { changed <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	var svcs []*corev1.Service
	for i := range 300 {
		svcs = append(svcs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "svc" + strconv.Itoa(i)}})
	}
	gen, err := st.WriteObjects(&labstore.State{Services: svcs})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(3 * time.Second):
		t.Fatal("no change notification within 3s of a write")
	}
	c, err := src.Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Services) != len(svcs) || c.Generation != gen {
		t.Fatalf("Changes after the notification: %d services at generation %d, want %d at %d", len(c.Services), c.Generation, len(svcs), gen)
	}
}
