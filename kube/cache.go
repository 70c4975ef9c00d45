package kube

import (
	"context"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// watched keeps the objects of a resource that match a label selector,
// as the API server last said them: a client-go informer (list, then
// watch from the list's resourceVersion with bookmarks, list again when
// that version is gone), without the informer factory, whose generated
// informers link every API group. Each change is handed to onEvent after
// the cache holds it.
type watched[T object[E], E any] struct {
	inf    cache.SharedIndexInformer
	logger *slog.Logger
}

// byKey is the name of the index newWatched's index function keeps.
const byKey = "key"

func newWatched[T object[E], L kruntime.Object, E any](r typed[T, L, E], sel string, index func(T) string, onEvent func(T, bool), logger *slog.Logger) *watched[T, E] {
	if logger == nil {
		logger = slog.Default()
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
			opts.LabelSelector = sel
			return r.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.LabelSelector = sel
			return r.Watch(ctx, opts)
		},
	}
	indexers := cache.Indexers{}
	if index != nil {
		indexers[byKey] = func(obj any) ([]string, error) {
			if o, ok := obj.(T); ok {
				if k := index(o); k != "" {
					return []string{k}, nil
				}
			}
			return nil, nil
		}
	}
	inf := cache.NewSharedIndexInformer(lw, T(new(E)), 0, indexers)
	if onEvent != nil {
		hear := func(obj any, deleted bool) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj, deleted = d.Obj, true
			}
			if o, ok := obj.(T); ok {
				onEvent(o, deleted)
			}
		}
		// Registered before the informer runs, so no error is possible.
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { hear(obj, false) },
			UpdateFunc: func(_, obj any) { hear(obj, false) },
			DeleteFunc: func(obj any) { hear(obj, true) },
		})
	}
	return &watched[T, E]{inf: inf, logger: logger}
}

// run lists and watches until ctx ends. client-go's logs (a list or a
// watch that failed, and is tried again) go to the backend's logger.
func (w *watched[T, E]) run(ctx context.Context) {
	w.inf.RunWithContext(quietly(ctx, w.logger))
}

// waitSynced reports whether the first list arrived before ctx ended.
func (w *watched[T, E]) waitSynced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), w.inf.HasSynced)
}

// get is the object ns/name as last seen.
func (w *watched[T, E]) get(ns, name string) (T, bool) {
	o, ok, err := w.inf.GetIndexer().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	t, ok := o.(T)
	return t, ok
}

// byIndex are the objects whose index key is k.
func (w *watched[T, E]) byIndex(k string) []T {
	objs, err := w.inf.GetIndexer().ByIndex(byKey, k)
	if err != nil {
		return nil
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
