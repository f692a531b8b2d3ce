package sources

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
)

// Cluster reads a real cluster's API server through shared informers, as
// upstream kube-proxy does (it watches Services and EndpointSlices).
type Cluster struct {
	Client kubernetes.Interface
	// Resync is the informers' resync period (upstream: config.syncPeriod).
	Resync time.Duration

	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	pending  pending
}

var _ Tracking = (*Cluster)(nil)

// Run implements Source: it starts the informers and waits for their caches.
func (c *Cluster) Run(ctx context.Context, changed func()) error {
	factory := informers.NewSharedInformerFactory(c.Client, c.Resync)
	svcInformer := factory.Core().V1().Services()
	sliceInformer := factory.Discovery().V1().EndpointSlices()
	if _, err := svcInformer.Informer().AddEventHandler(handlerOf(c.pending.service, changed)); err != nil {
		return err
	}
	if _, err := sliceInformer.Informer().AddEventHandler(handlerOf(c.pending.slice, changed)); err != nil {
		return err
	}
	c.services = svcInformer.Lister()
	c.slices = sliceInformer.Lister()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cluster source: cache of %v did not sync", typ)
		}
	}
	return nil
}

// List implements Source.
func (c *Cluster) List() (*Objects, error) {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	slices, err := c.slices.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	return &Objects{Services: svcs, EndpointSlices: slices}, nil
}

// Changes implements Tracking: what the informers' handlers saw since the
// previous call.
func (c *Cluster) Changes() (*Changes, error) { return c.pending.take(), nil }

// handlerOf records each event's object (nil for a deletion) under its
// namespace/name, then calls changed.
func handlerOf[T any](record func(Key, *T), changed func()) cache.ResourceEventHandlerFuncs {
	set := func(obj any) {
		if o, ok := obj.(*T); ok {
			if m, err := meta.Accessor(o); err == nil {
				record(Key{m.GetNamespace(), m.GetName()}, o)
			}
		}
		changed()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, err := meta.Accessor(obj); err == nil {
				record(Key{m.GetNamespace(), m.GetName()}, nil)
			}
			changed()
		},
	}
}
