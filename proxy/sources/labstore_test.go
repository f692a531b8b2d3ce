package sources

import (
	"context"
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
