// Package kubeimage checks what deploy/kubernetes/base asks of the cluster that is easy to get wrong and invisible
// until a pod starts: the image it pulls and the memory the Go runtime aims under.
package kubeimage

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/syncverse/hub/internal/rig"
)

const base = "../../deploy/kubernetes/base"

func deployment(t *testing.T) appsv1.Deployment {
	t.Helper()
	b, err := os.ReadFile(base + "/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		t.Fatalf("deployment.yaml: %v", err)
	}
	return d
}

// No registry publishes the hub's image: the base names a placeholder that can never be pulled
// (registry.invalid), never a tag such as latest that someone else could publish, and its kustomization lists it
// for `kustomize edit set image`.
func TestBaseImageIsAPlaceholderToSet(t *testing.T) {
	const placeholder = "registry.invalid/syncverse/hub"
	c := deployment(t).Spec.Template.Spec.Containers[0]
	if c.Image != placeholder {
		t.Errorf("container image = %q, want the placeholder %q (set with kustomize edit set image)", c.Image, placeholder)
	}
	k, err := os.ReadFile(base + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kust struct {
		Images []struct {
			Name, NewName, NewTag string
		} `json:"images"`
	}
	if err := yaml.Unmarshal(k, &kust); err != nil {
		t.Fatal(err)
	}
	if len(kust.Images) != 1 || kust.Images[0].Name != placeholder || kust.Images[0].NewName != "" || kust.Images[0].NewTag != "" {
		t.Errorf("kustomization images = %+v, want only the placeholder %s, with no name or tag set", kust.Images, placeholder)
	}
	if !strings.Contains(string(k), "kustomize edit set image "+placeholder+"=") {
		t.Errorf("kustomization.yaml does not say how to set the image (kustomize edit set image %s=...)", placeholder)
	}
	kubectl := rig.Optional(t, "kubectl", "the rendered image is not checked", "https://kubernetes.io/docs/tasks/tools/")
	out, err := exec.Command(kubectl, "kustomize", base).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "image: "+placeholder+"\n") || strings.Contains(string(out), ":latest") {
		t.Errorf("kubectl kustomize %s: %v; want the placeholder image rendered, no :latest\n%s", base, err, out)
	}
}

// GOMEMLIMIT leaves headroom under the container's memory limit (about 10 %): what the Go runtime does not count
// (stacks, the kernel's socket buffers charged to the pod) must fit before the OOM killer comes.
func TestGOMEMLIMITLeavesHeadroom(t *testing.T) {
	c := deployment(t).Spec.Template.Spec.Containers[0]
	limit := c.Resources.Limits.Memory().Value()
	var soft int64
	for _, e := range c.Env {
		if e.Name != "GOMEMLIMIT" {
			continue
		}
		if e.ValueFrom != nil || !strings.HasSuffix(e.Value, "B") {
			t.Fatalf("GOMEMLIMIT = %+v, want a value in the runtime's units (460MiB)", e)
		}
		q, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B")) // the runtime's MiB is Kubernetes' Mi
		if err != nil {
			t.Fatalf("GOMEMLIMIT %q: %v", e.Value, err)
		}
		soft = q.Value()
	}
	if limit == 0 || soft == 0 {
		t.Fatalf("limits.memory = %d, GOMEMLIMIT = %d bytes; want both set", limit, soft)
	}
	if r := float64(soft) / float64(limit); r < 0.85 || r > 0.92 {
		t.Errorf("GOMEMLIMIT is %.0f %% of limits.memory, want about 90 %%", r*100)
	}
}
