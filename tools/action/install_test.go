package action

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// release is a loopback release server laid out as GitHub's:
// /download/<tag>/<asset>. It records every path asked for.
type release struct {
	srv    *httptest.Server
	mu     sync.Mutex
	assets map[string][]byte
	asked  []string
}

func (r *release) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// fakeBinary is a binary of a fake archive, payability (the quick build) or
// payabilityd (the full build): a script printing its name and the version
// and platform it was packed for.
func fakeBinary(name, version, plat string) []byte {
	return []byte("#!/bin/sh\necho " + name + " " + version + " " + plat + "\n")
}

// releaseBinaries are the two binaries every release archive holds.
var releaseBinaries = []string{"payability", "payabilityd"}

// exe is a binary's file name on plat.
func exe(name, plat string) string {
	if strings.HasPrefix(plat, "windows_") {
		return name + ".exe"
	}
	return name
}

func archiveBytes(t *testing.T, version, plat string) (string, []byte) {
	t.Helper()
	return archiveOf(t, version, plat, releaseBinaries)
}

// archiveOf is a release archive holding README.md and the binaries names.
func archiveOf(t *testing.T, version, plat string, names []string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if strings.HasPrefix(plat, "windows_") {
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("README.md")
		w.Write([]byte("readme"))
		for _, n := range names {
			w, err := zw.Create(exe(n, plat))
			if err != nil {
				t.Fatal(err)
			}
			w.Write(fakeBinary(n, version, plat))
		}
		zw.Close()
		return "payability_" + version + "_" + plat + ".zip", buf.Bytes()
	}
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := map[string][]byte{"README.md": []byte("readme")}
	order := []string{"README.md"}
	for _, n := range names {
		files[n] = fakeBinary(n, version, plat)
		order = append(order, n)
	}
	for _, n := range order {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write(files[n])
	}
	tw.Close()
	gz.Close()
	return "payability_" + version + "_" + plat + ".tar.gz", buf.Bytes()
}

var allPlatforms = []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"}

// newRelease serves the releases of versions (without v), six archives and a
// checksums.txt each; tamper replaces one archive's bytes after its checksum
// was taken.
func newRelease(t *testing.T, tamper string, versions ...string) *release {
	t.Helper()
	return newReleaseOf(t, tamper, releaseBinaries, versions...)
}

// newReleaseOf is newRelease with archives holding the binaries names.
func newReleaseOf(t *testing.T, tamper string, names []string, versions ...string) *release {
	t.Helper()
	r := &release{assets: map[string][]byte{}}
	for _, v := range versions {
		var sums strings.Builder
		for _, p := range allPlatforms {
			name, b := archiveOf(t, v, p, names)
			sum := sha256.Sum256(b)
			fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
			if name == tamper {
				b = append(bytes.Clone(b), 0)
			}
			r.assets["/download/v"+v+"/"+name] = b
		}
		r.assets["/download/v"+v+"/checksums.txt"] = []byte(sums.String())
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.asked = append(r.asked, req.URL.Path)
		b, ok := r.assets[req.URL.Path]
		r.mu.Unlock()
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

type installRun struct {
	code           int
	stdout, stderr string
	outputs        map[string]string
	path           string // what GITHUB_PATH received
}

// runInstall runs install.sh resolve, then (when resolve succeeded)
// install.sh install with resolve's outputs, as action.yml chains them.
func runInstall(t *testing.T, env map[string]string, pathPrefix string) installRun {
	t.Helper()
	dir := t.TempDir()
	outFile := filepath.Join(dir, "github_output")
	pathFile := filepath.Join(dir, "github_path")
	base := []string{
		"PATH=" + pathPrefix + os.Getenv("PATH"),
		"HOME=" + dir,
		"GITHUB_OUTPUT=" + outFile,
		"GITHUB_PATH=" + pathFile,
		"RUNNER_TEMP=" + dir,
		"RUNNER_TOOL_CACHE=" + filepath.Join(dir, "toolcache"),
		"GITHUB_ACTION_PATH=" + filepath.Join("..", ".."),
	}
	for k, v := range env {
		base = append(base, k+"="+v)
	}
	run := func(env []string, args ...string) (int, string, string) {
		cmd := exec.Command("bash", append([]string{"install.sh"}, args...)...)
		cmd.Env = env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stdout.String(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stdout.String(), stderr.String()
	}
	r := installRun{outputs: map[string]string{}}
	r.code, r.stdout, r.stderr = run(base, "resolve")
	raw, _ := os.ReadFile(outFile)
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			r.outputs[k] = v
		}
	}
	if r.code == 0 {
		if c, ok := env["CACHE_DIR_OVERRIDE"]; ok {
			r.outputs["cache-dir"] = c
		}
		installEnv := append(slices.Clone(base), "MODE="+r.outputs["mode"], "VERSION="+r.outputs["version"],
			"ARCHIVE="+r.outputs["archive"], "CACHE_DIR="+r.outputs["cache-dir"])
		code, stdout, stderr := run(installEnv, "install")
		r.code, r.stdout, r.stderr = code, r.stdout+stdout, r.stderr+stderr
	}
	p, _ := os.ReadFile(pathFile)
	r.path = strings.TrimSpace(string(p))
	return r
}

func TestInstallPicksTheArchiveOfTheRunner(t *testing.T) {
	rel := newRelease(t, "", "1.2.3")
	for _, c := range []struct{ os, arch, plat string }{
		{"Linux", "X64", "linux_amd64"}, {"Linux", "ARM64", "linux_arm64"},
		{"macOS", "X64", "darwin_amd64"}, {"macOS", "ARM64", "darwin_arm64"},
		{"Windows", "X64", "windows_amd64"}, {"Windows", "ARM64", "windows_arm64"},
	} {
		t.Run(c.plat, func(t *testing.T) {
			before := len(rel.paths())
			r := runInstall(t, map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": "v1.2.3",
				"RUNNER_OS": c.os, "RUNNER_ARCH": c.arch}, "")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			name, _ := archiveBytes(t, "1.2.3", c.plat)
			if got := rel.paths()[before:]; !slices.Equal(got, []string{"/download/v1.2.3/checksums.txt", "/download/v1.2.3/" + name}) {
				t.Errorf("asked %v", got)
			}
			if r.outputs["mode"] != "release" || r.outputs["archive"] != name || !strings.Contains(r.stdout, "SHA-256 verified") {
				t.Errorf("outputs %v\n%s", r.outputs, r.stdout)
			}
			// The quick build and, beside it, the full build it hands
			// serve, monitor and mcp to; nothing else.
			var want []string
			for _, n := range releaseBinaries {
				want = append(want, exe(n, c.plat))
				f := filepath.Join(r.path, exe(n, c.plat))
				b, err := os.ReadFile(f)
				if err != nil || !bytes.Equal(b, fakeBinary(n, "1.2.3", c.plat)) {
					t.Errorf("GITHUB_PATH %q holds no %s of %s: %v", r.path, exe(n, c.plat), c.plat, err)
				}
				if fi, err := os.Stat(f); err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("%s is not executable: %v", f, err)
				}
			}
			ents, _ := os.ReadDir(r.path)
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, want) {
				t.Errorf("GITHUB_PATH %q holds %v, want %v", r.path, got, want)
			}
			if c.os == "Linux" && c.arch == "X64" {
				for _, n := range releaseBinaries {
					out, err := exec.Command(filepath.Join(r.path, n)).Output()
					if err != nil || strings.TrimSpace(string(out)) != n+" 1.2.3 linux_amd64" {
						t.Errorf("the installed %s says %q %v", n, out, err)
					}
				}
			}
		})
	}
}

func TestInstallRefusesATamperedArchive(t *testing.T) {
	rel := newRelease(t, "payability_1.2.3_linux_arm64.tar.gz", "1.2.3")
	r := runInstall(t, map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": "v1.2.3",
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "ARM64"}, "")
	if r.code != 2 || !strings.Contains(r.stdout, "::error title=payability install::payability_1.2.3_linux_arm64.tar.gz does not match checksums.txt of v1.2.3") ||
		!strings.Contains(r.stdout, "refused") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r.path != "" {
		t.Errorf("a refused archive reached PATH: %q", r.path)
	}
	files, _ := filepath.Glob(filepath.Join(r.outputs["cache-dir"], "payability_*"))
	if len(files) != 0 {
		t.Errorf("the refused archive stays in the cache: %v", files)
	}
}

// An archive without payabilityd (or without payability) is refused and
// nothing reaches PATH: a later `payability serve` would fail.
func TestInstallRefusesAnArchiveWithoutBothBinaries(t *testing.T) {
	for _, c := range []struct {
		os, arch, plat string
		names          []string
		missing        string
	}{
		{"Linux", "X64", "linux_amd64", []string{"payability"}, "payabilityd"},
		{"Linux", "X64", "linux_amd64", []string{"payabilityd"}, "payability"},
		{"Windows", "X64", "windows_amd64", []string{"payability"}, "payabilityd.exe"},
	} {
		t.Run(c.plat+"-"+c.missing, func(t *testing.T) {
			rel := newReleaseOf(t, "", c.names, "1.2.3")
			r := runInstall(t, map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": "v1.2.3",
				"RUNNER_OS": c.os, "RUNNER_ARCH": c.arch}, "")
			name, _ := archiveOf(t, "1.2.3", c.plat, c.names)
			if r.code != 2 || !strings.Contains(r.stdout, "::error title=payability install::"+name+" of v1.2.3 holds no "+c.missing+"\n") {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r.path != "" {
				t.Errorf("GITHUB_PATH %q", r.path)
			}
			if _, err := os.Stat(filepath.Join(r.outputs["cache-dir"], "bin")); !os.IsNotExist(err) {
				t.Errorf("a partial bin/ stays in the cache: %v", err)
			}
		})
	}
}

// A cached archive is used after verifying it again; one that no longer
// matches is fetched anew.
func TestInstallUsesTheCache(t *testing.T) {
	rel := newRelease(t, "", "1.2.3")
	cache := t.TempDir()
	env := map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": "v1.2.3",
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "CACHE_DIR_OVERRIDE": cache}
	name, good := archiveBytes(t, "1.2.3", "linux_amd64")
	for i, c := range []struct {
		prepare   func()
		downloads bool
		says      string
	}{
		{func() {}, true, "downloaded " + name},
		{func() {}, false, name + " from the cache"},
		{func() { os.WriteFile(filepath.Join(cache, name), []byte("corrupted"), 0o644) }, true, "downloaded " + name},
	} {
		c.prepare()
		if err := copyChecksums(rel, cache); err != nil {
			t.Fatal(err)
		}
		before := len(rel.paths())
		r := runInstall(t, env, "")
		if r.code != 0 || !strings.Contains(r.stdout, c.says) {
			t.Fatalf("run %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
		fetched := slices.Contains(rel.paths()[before:], "/download/v1.2.3/"+name)
		if fetched != c.downloads {
			t.Errorf("run %d: archive fetched %v, want %v", i, fetched, c.downloads)
		}
		if b, _ := os.ReadFile(filepath.Join(cache, name)); !bytes.Equal(b, good) {
			t.Errorf("run %d: the cache does not hold the verified archive", i)
		}
	}
}

// copyChecksums puts the release's checksums.txt in the cache directory, as
// resolve does in its own.
func copyChecksums(rel *release, dir string) error {
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), rel.assets["/download/v1.2.3/checksums.txt"], 0o644)
}

// fakeGo is a go command that records its arguments.
func fakeGo(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	log = filepath.Join(dir, "go.log")
	script := "#!/bin/sh\nif [ \"$1\" = env ]; then echo " + dir + "/gopath; exit 0; fi\necho \"$@\" >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

// A ref with no release, or that is not a release tag, falls back to go
// install and says so.
func TestInstallFallsBackToGoInstall(t *testing.T) {
	rel := newRelease(t, "", "1.2.3")
	for _, c := range []struct {
		name, version, actionRef, says string
		asks                           []string
	}{
		{"a tag with no release", "v9.9.9", "", "v9.9.9 has no release", []string{"/download/v9.9.9/checksums.txt"}},
		{"a branch", "", "main", "main is not a release tag", nil},
		{"a commit", "0123456789abcdef0123456789abcdef01234567", "", "is not a release tag", nil},
		{"latest", "latest", "", "latest is not a release tag", nil},
		{"a moving tag of another major", "", "v7", "v7 is not a release tag", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			goDir, goLog := fakeGo(t)
			before := len(rel.paths())
			r := runInstall(t, map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": c.version,
				"ACTION_REF": c.actionRef, "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}, goDir+string(os.PathListSeparator))
			if r.code != 0 || r.outputs["mode"] != "go" || !strings.Contains(r.stdout, "::notice title=payability install::") || !strings.Contains(r.stdout, c.says) {
				t.Fatalf("exit %d outputs %v\n%s%s", r.code, r.outputs, r.stdout, r.stderr)
			}
			ref := c.version
			if ref == "" {
				ref = c.actionRef
			}
			logged, _ := os.ReadFile(goLog)
			if strings.TrimSpace(string(logged)) != "install github.com/exchangerebel/payability/cmd/payability@"+ref {
				t.Errorf("go was run as %q", logged)
			}
			if got := rel.paths()[before:]; !slices.Equal(got, c.asks) {
				t.Errorf("asked the release server %v, want %v", got, c.asks)
			}
			if r.path != goDir+"/gopath/bin" {
				t.Errorf("GITHUB_PATH %q", r.path)
			}
		})
	}
}

// The moving major tag installs the release its source names (buildinfo.Version).
func TestInstallMovingMajorTag(t *testing.T) {
	src, err := os.ReadFile("../../internal/buildinfo/buildinfo.go")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	for _, l := range strings.Split(string(src), "\n") {
		if v, ok := strings.CutPrefix(l, `var Version = "`); ok {
			version = strings.TrimSuffix(v, `"`)
		}
	}
	major, _, _ := strings.Cut(version, ".")
	rel := newRelease(t, "", version)
	r := runInstall(t, map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "ACTION_REF": "v" + major,
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}, "")
	if r.code != 0 || r.outputs["version"] != "v"+version || r.outputs["mode"] != "release" {
		t.Fatalf("exit %d outputs %v\n%s%s", r.code, r.outputs, r.stdout, r.stderr)
	}
}

func TestInstallRefuses(t *testing.T) {
	rel := newRelease(t, "", "1.2.3")
	for _, c := range []struct {
		name string
		env  map[string]string
		says string
	}{
		{"an unknown arch", map[string]string{"RUNNER_ARCH": "ARM"}, "no release archive for runner arch 'ARM'"},
		{"an unknown OS", map[string]string{"RUNNER_OS": "Plan9"}, "no release archive for runner OS 'Plan9'"},
		{"a plain-http base", map[string]string{"PAYABILITY_RELEASES": "http://releases.example/x"}, "PAYABILITY_RELEASES must be an https URL"},
		{"a version with shell in it", map[string]string{"PAYABILITY_VERSION": "v1;rm -rf /"}, "version must be a tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"PAYABILITY_RELEASES": rel.srv.URL, "PAYABILITY_VERSION": "v1.2.3", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"}
			for k, v := range c.env {
				env[k] = v
			}
			r := runInstall(t, env, "")
			if r.code != 2 || !strings.Contains(r.stdout, "::error title=payability install::"+c.says) {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r.path != "" {
				t.Errorf("GITHUB_PATH %q", r.path)
			}
		})
	}
}
