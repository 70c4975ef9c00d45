package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultFileMode is a secret/configMap volume's defaultMode when unset.
const defaultFileMode = 0o644

// mount sets up the volumes container c mounts and returns the container
// paths they map to locally. A missing Secret, ConfigMap or claim is a
// waitingError: the pod stays Pending and the node tries again.
func (w *podWorker) mount(ctx context.Context, pod *corev1.Pod, c *corev1.Container) (pathMap, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	var paths pathMap
	placed := map[string]string{} // volume name → where its content is
	for _, vm := range c.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume mount %q: no such volume", vm.Name)
		}
		var base string
		switch {
		case v.HostPath != nil:
			base = v.HostPath.Path
			if t := v.HostPath.Type; t != nil && *t == corev1.HostPathDirectoryOrCreate {
				if err := os.MkdirAll(base, 0o755); err != nil {
					return nil, fmt.Errorf("hostPath volume %q: %w", v.Name, err)
				}
			}
		case v.PersistentVolumeClaim != nil:
			// A claim is the shared filesystem at the mount path itself.
			claim := v.PersistentVolumeClaim.ClaimName
			if _, err := w.n.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, claim, metav1.GetOptions{}); err != nil {
				return nil, waitFor("ContainerCreating", "persistentvolumeclaim %q: %v", claim, err)
			}
			base = vm.MountPath
			if err := os.MkdirAll(base, 0o755); err != nil {
				return nil, fmt.Errorf("volume %q: %w", v.Name, err)
			}
		default:
			if placed[v.Name] == "" {
				dir := filepath.Join(w.root, vm.MountPath)
				if err := w.fill(ctx, pod, v, dir); err != nil {
					return nil, err
				}
				placed[v.Name] = dir
			}
			base = placed[v.Name]
		}
		paths.add(vm.MountPath, filepath.Join(base, vm.SubPath))
	}
	return paths, nil
}

// fill writes volume v's content into dir.
func (w *podWorker) fill(ctx context.Context, pod *corev1.Pod, v corev1.Volume, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("volume %q: %w", v.Name, err)
	}
	src := v.VolumeSource
	switch {
	case src.EmptyDir != nil:
		return nil
	case src.Secret != nil:
		s := src.Secret
		return w.fillSecret(ctx, v.Name, dir, s.SecretName, s.Items, s.DefaultMode, s.Optional)
	case src.ConfigMap != nil:
		cm := src.ConfigMap
		return w.fillConfigMap(ctx, v.Name, dir, cm.Name, cm.Items, cm.DefaultMode, cm.Optional)
	case src.DownwardAPI != nil:
		return writeDownward(pod, dir, src.DownwardAPI.Items, src.DownwardAPI.DefaultMode)
	case src.Projected != nil:
		return w.fillProjected(ctx, pod, v.Name, dir, src.Projected)
	}
	return fmt.Errorf("volume %q: this kind of volume is not supported by the kubetest node", v.Name)
}

func (w *podWorker) fillSecret(ctx context.Context, vol, dir, name string, items []corev1.KeyToPath, mode *int32, optional *bool) error {
	s, err := w.n.client.CoreV1().Secrets(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && deref(optional) {
			return nil
		}
		return waitFor("ContainerCreating", "MountVolume.SetUp failed for volume %q : %v", vol, err)
	}
	return writeKeys(vol, dir, s.Data, items, mode, deref(optional))
}

func (w *podWorker) fillConfigMap(ctx context.Context, vol, dir, name string, items []corev1.KeyToPath, mode *int32, optional *bool) error {
	cm, err := w.n.client.CoreV1().ConfigMaps(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && name == rootCAConfigMap {
			// Published by a controller-manager this cluster lacks
			// (Namespace makes it; namespaces made otherwise do not have it).
			cm = &corev1.ConfigMap{Data: map[string]string{"ca.crt": string(w.n.c.caPEM)}}
		} else if apierrors.IsNotFound(err) && deref(optional) {
			return nil
		} else {
			return waitFor("ContainerCreating", "MountVolume.SetUp failed for volume %q : %v", vol, err)
		}
	}
	data := map[string][]byte{}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	return writeKeys(vol, dir, data, items, mode, deref(optional))
}

// fillProjected writes a projected volume: the ServiceAccount token
// volume admission adds to every pod is one (token, ca.crt, namespace).
func (w *podWorker) fillProjected(ctx context.Context, pod *corev1.Pod, vol, dir string, p *corev1.ProjectedVolumeSource) error {
	for _, src := range p.Sources {
		var err error
		switch {
		case src.Secret != nil:
			err = w.fillSecret(ctx, vol, dir, src.Secret.Name, src.Secret.Items, p.DefaultMode, src.Secret.Optional)
		case src.ConfigMap != nil:
			err = w.fillConfigMap(ctx, vol, dir, src.ConfigMap.Name, src.ConfigMap.Items, p.DefaultMode, src.ConfigMap.Optional)
		case src.DownwardAPI != nil:
			err = writeDownward(pod, dir, src.DownwardAPI.Items, p.DefaultMode)
		case src.ServiceAccountToken != nil:
			err = w.writeProjectedToken(ctx, pod, dir, src.ServiceAccountToken, p.DefaultMode)
		default:
			err = fmt.Errorf("volume %q: this projection is not supported by the kubetest node", vol)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *podWorker) writeProjectedToken(ctx context.Context, pod *corev1.Pod, dir string, t *corev1.ServiceAccountTokenProjection, mode *int32) error {
	token, err := w.n.c.podToken(ctx, pod, t.Audience, t.ExpirationSeconds)
	if err != nil {
		return waitFor("ContainerCreating", "%v", err)
	}
	return writeFile(filepath.Join(dir, t.Path), []byte(token), fileMode(mode, nil))
}

func writeDownward(pod *corev1.Pod, dir string, items []corev1.DownwardAPIVolumeFile, mode *int32) error {
	for _, it := range items {
		if it.FieldRef == nil {
			return fmt.Errorf("downward API file %q: only fieldRef is supported by the kubetest node", it.Path)
		}
		v, err := fieldValue(pod, it.FieldRef.FieldPath)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, it.Path), []byte(v), fileMode(mode, it.Mode)); err != nil {
			return err
		}
	}
	return nil
}

// writeKeys writes a Secret's or ConfigMap's keys as files: all of them,
// or only items (at their paths) when given.
func writeKeys(vol, dir string, data map[string][]byte, items []corev1.KeyToPath, mode *int32, optional bool) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := writeFile(filepath.Join(dir, k), v, fileMode(mode, nil)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return waitFor("ContainerCreating", "MountVolume.SetUp failed for volume %q : references non-existent key: %s", vol, it.Key)
		}
		if err := writeFile(filepath.Join(dir, it.Path), v, fileMode(mode, it.Mode)); err != nil {
			return err
		}
	}
	return nil
}

func fileMode(def, item *int32) os.FileMode {
	switch {
	case item != nil:
		return os.FileMode(*item)
	case def != nil:
		return os.FileMode(*def)
	}
	return defaultFileMode
}

// writeFile writes data with exactly mode (not masked by the umask).
func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	os.Remove(path) // a read-only file from an earlier try is replaced
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

func deref(b *bool) bool { return b != nil && *b }
