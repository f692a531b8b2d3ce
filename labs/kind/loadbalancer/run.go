package loadbalancer

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/svclab/svclab/labs/podnet"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configure Run.
type Options struct {
	Pool       string        // the addresses to give out: a CIDR or first-last
	Kubeconfig string        // "" = in-cluster config
	Out        io.Writer     // log
	Interval   time.Duration // between two passes (default 1s)
}

// Run keeps the Services' status.loadBalancer in line with Plan until ctx
// is done: every Interval it lists the Services and writes the status of
// those Plan changes (a conflict is retried on the next pass).
func Run(ctx context.Context, opts Options) error {
	pool, err := podnet.ParseAddrRange(opts.Pool)
	if err != nil {
		return fmt.Errorf("--pool %q: %w", opts.Pool, err)
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	cfg, err := clientConfig(opts.Kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "svclab load balancer: pool %s (%d addresses), class %s or none\n", pool, pool.Size(), Class)
	for {
		if err := pass(ctx, client, pool, opts.Out); err != nil {
			fmt.Fprintf(opts.Out, "pass: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Interval):
		}
	}
}

// pass lists the Services and writes the status of those Plan changes.
func pass(ctx context.Context, client kubernetes.Interface, pool podnet.AddrRange, out io.Writer) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := client.CoreV1().Services(metav1.NamespaceAll).List(cctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	byName := map[string]int{}
	for i, s := range list.Items {
		byName[s.Namespace+"/"+s.Name] = i
	}
	for _, ch := range Plan(pool, list.Items) {
		svc := list.Items[byName[ch.Namespace+"/"+ch.Name]].DeepCopy()
		svc.Status.LoadBalancer.Ingress = ch.Ingress
		_, err := client.CoreV1().Services(svc.Namespace).UpdateStatus(cctx, svc, metav1.UpdateOptions{})
		switch {
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			// changed or gone meanwhile: the next pass sees it
		case err != nil:
			fmt.Fprintf(out, "%s/%s: %v\n", svc.Namespace, svc.Name, err)
		case ch.Ingress == nil:
			fmt.Fprintf(out, "%s/%s: released its address\n", svc.Namespace, svc.Name)
		default:
			fmt.Fprintf(out, "%s/%s: %s\n", svc.Namespace, svc.Name, ch.Ingress[0].IP)
		}
	}
	return nil
}

func clientConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}
