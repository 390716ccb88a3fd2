package release

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The container image's build context, made from dist/ by
// image-context.sh: exactly the files the Dockerfile copies (both binaries
// of each arch: payability, the quick build, the entrypoint, and
// payabilityd, the full build it hands serve to), no secret, a non-root
// user. When buildah is installed the image is built (docker format, so the
// HEALTHCHECK stays) and run; without it the test says so and checks the
// context only.
func TestImage(t *testing.T) {
	d := dist(t)
	m := readMetadata(t, d)
	ctx := filepath.Join(t.TempDir(), "ctx")
	if out, err := exec.Command("bash", "image-context.sh", d, ctx).CombinedOutput(); err != nil {
		t.Fatalf("image-context.sh: %v\n%s", err, out)
	}
	var files []string
	filepath.WalkDir(ctx, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(ctx, p)
		if e.Type().IsRegular() || (e.IsDir() && rel == "rootfs/data") {
			files = append(files, rel)
		}
		return nil
	})
	slices.Sort(files)
	want := []string{"Dockerfile", "bin/amd64/payability", "bin/amd64/payabilityd", "bin/arm64/payability", "bin/arm64/payabilityd", "rootfs/data",
		"rootfs/etc/group", "rootfs/etc/passwd", "rootfs/etc/ssl/certs/ca-certificates.crt"}
	if !slices.Equal(files, want) {
		t.Fatalf("context holds %v, want %v", files, want)
	}
	for _, f := range files {
		if f == "rootfs/data" || strings.HasPrefix(f, "bin/") {
			continue // the binaries name PEM labels in their parsers
		}
		b, err := os.ReadFile(filepath.Join(ctx, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "PRIVATE KEY") {
			t.Errorf("%s holds a private key", f)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		quick, err := os.ReadFile(filepath.Join(ctx, "bin", arch, "payability"))
		if err != nil {
			t.Fatal(err)
		}
		full, err := os.ReadFile(filepath.Join(ctx, "bin", arch, "payabilityd"))
		if err != nil {
			t.Fatal(err)
		}
		checkBuilds(t, "the context's bin/"+arch, quick, full)
		checkStatic(t, "bin/"+arch+"/payability", quick, "linux/"+arch)
		checkStatic(t, "bin/"+arch+"/payabilityd", full, "linux/"+arch)
	}
	if ents, _ := os.ReadDir(filepath.Join(ctx, "rootfs/data")); len(ents) != 0 {
		t.Errorf("/data is not empty: %v", ents)
	}
	passwd, _ := os.ReadFile(filepath.Join(ctx, "rootfs/etc/passwd"))
	for _, l := range strings.Split(strings.TrimSpace(string(passwd)), "\n") {
		f := strings.Split(l, ":")
		if len(f) != 7 || f[2] == "0" || f[3] == "0" {
			t.Errorf("passwd line %q: want one non-root user", l)
		}
	}
	df, _ := os.ReadFile(filepath.Join(ctx, "Dockerfile"))
	for _, line := range []string{"\nFROM scratch\n", "\nUSER 65532:65532\n", "\nVOLUME [\"/data\"]\n", "\nENTRYPOINT [\"/payability\"]\n",
		`CMD ["/payability", "healthcheck"]` + "\n", "\nCMD [\"serve\"]\n",
		"\nCOPY bin/${TARGETARCH}/payability /payability\n", "\nCOPY bin/${TARGETARCH}/payabilityd /payabilityd\n"} {
		if !strings.Contains(string(df), line) {
			t.Errorf("Dockerfile lacks %q", line)
		}
	}
	if n := strings.Count(string(df), "\nFROM "); n != 1 {
		t.Errorf("%d FROM lines: the image must need no base image", n)
	}
	if !strings.Contains(string(passwd), ":65532:65532:") {
		t.Errorf("passwd does not define the Dockerfile's user 65532")
	}

	buildah, err := exec.LookPath("buildah")
	if err != nil {
		t.Log("buildah is not installed: the image was not built or run here; its build context was checked")
		return
	}
	store := t.TempDir()
	args := func(a ...string) []string {
		return append([]string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}, a...)
	}
	tag := "localhost/payability-test:" + m.Version
	if out, err := exec.Command(buildah, args("bud", "--isolation", "chroot", "--format", "docker", "--platform", "linux/amd64", "-t", tag, ctx)...).CombinedOutput(); err != nil {
		t.Fatalf("buildah bud: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		exec.Command(buildah, args("rm", "--all")...).Run()
		exec.Command(buildah, args("rmi", "--all", "--force")...).Run()
	})
	out, err := exec.Command(buildah, args("inspect", "--type", "image", tag)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var img struct {
		Docker struct {
			Config struct {
				User        string
				Entrypoint  []string
				Cmd         []string
				Volumes     map[string]any
				Healthcheck struct{ Test []string }
			} `json:"config"`
		}
	}
	if err := json.Unmarshal(out, &img); err != nil {
		t.Fatal(err)
	}
	c := img.Docker.Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/payability"}) || !slices.Equal(c.Cmd, []string{"serve"}) ||
		c.Volumes["/data"] == nil || !slices.Equal(c.Healthcheck.Test, []string{"CMD", "/payability", "healthcheck"}) {
		t.Errorf("image config %+v", c)
	}
	ctr, err := exec.Command(buildah, args("from", tag)...).Output()
	if err != nil {
		t.Fatalf("buildah from: %v", err)
	}
	run := func(cmd ...string) (string, error) {
		out, err := exec.Command(buildah, args(append([]string{"run", "--isolation", "chroot", strings.TrimSpace(string(ctr)), "--"}, cmd...)...)...).CombinedOutput()
		return string(out), err
	}
	for _, bin := range []string{"/payability", "/payabilityd"} {
		if out, err := run(bin, "version"); err != nil || !strings.HasPrefix(out, "payability "+m.Version+"\n") {
			t.Errorf("the image's %s version: %v\n%s", bin, err, out)
		}
	}
	// The entrypoint hands a full-only command to /payabilityd beside it.
	if out, err := run("/payability", "store", "-h"); err != nil || !strings.HasPrefix(out, "usage: payability store migrate") {
		t.Errorf("the image's payability store -h: %v\n%s", err, out)
	}
	// Nothing listens in this container: the health check fails closed, naming why.
	if out, err := run("/payability", "healthcheck"); err == nil || !strings.Contains(out, "unhealthy: refused") {
		t.Errorf("healthcheck with nothing listening: %v\n%s", err, out)
	}
}
