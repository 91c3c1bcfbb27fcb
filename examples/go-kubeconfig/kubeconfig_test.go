// A Go test against kube-apiserver-py through its admin kubeconfig, with the standard library only (this
// machine has no Go module proxy for client-go or controller-runtime; docs/testing.md shows those). The
// server is started once for the package, as a controller's suite starts envtest.
package kubeconfigtest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cluster is what a test takes from the kubeconfig: the server's URL, its CA and the admin's token.
type cluster struct {
	server string
	token  string
	client *http.Client
}

var kube *cluster

func TestMain(m *testing.M) {
	dataDir, err := os.MkdirTemp("", "kube-apiserver-")
	if err != nil {
		panic(err)
	}
	python := os.Getenv("KUBE_APISERVER_PYTHON")
	if python == "" {
		python = "python3"
	}
	server := exec.Command(python, "-m", "kube_apiserver", "--secure-port", "0", "--data-dir", dataDir,
		"--storage-backend=memory", "--controllers=")
	server.Stdout, server.Stderr = os.Stderr, os.Stderr
	if err := server.Start(); err != nil {
		panic(err)
	}
	kubeconfig := filepath.Join(dataDir, "admin.kubeconfig") // written once the server serves
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(kubeconfig); err == nil {
			break
		} else if time.Now().After(deadline) {
			panic("kube-apiserver did not start")
		}
	}
	kube, err = load(kubeconfig)
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = server.Process.Signal(os.Interrupt) // a clean stop
	_ = server.Wait()
	os.RemoveAll(dataDir)
	os.Exit(code)
}

// load reads the three fields this test needs from the kubeconfig's single cluster and user (client-go's
// clientcmd reads all of it).
func load(path string) (*cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		name, value, found := strings.Cut(strings.TrimSpace(scanner.Text()), ": ")
		if found {
			fields[name] = value
		}
	}
	ca, err := base64.StdEncoding.DecodeString(fields["certificate-authority-data"])
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no CA certificate in %s", path)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &cluster{fields["server"], fields["token"], &http.Client{Transport: transport, Timeout: 30 * time.Second}}, nil
}

func (c *cluster) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var reader *bytes.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		reader = bytes.NewReader(encoded)
	} else {
		reader = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, c.server+path, reader)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, answer
}

func configMap(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]string{"app": "go-test"}},
		"data":     map[string]string{"k": name}}
}

const configMaps = "/api/v1/namespaces/default/configmaps"

func TestCreateReadAndConflict(t *testing.T) {
	status, created := kube.do(t, "POST", configMaps, configMap("go-a"))
	if status != 201 {
		t.Fatalf("create: %d %v", status, created)
	}
	status, read := kube.do(t, "GET", configMaps+"/go-a", nil)
	if status != 200 || read["data"].(map[string]any)["k"] != "go-a" {
		t.Fatalf("get: %d %v", status, read)
	}
	status, again := kube.do(t, "POST", configMaps, configMap("go-a"))
	if status != 409 || again["reason"] != "AlreadyExists" {
		t.Fatalf("second create: %d %v", status, again)
	}
}

func TestAWatchSeesTheCreate(t *testing.T) {
	_, list := kube.do(t, "GET", configMaps, nil)
	version := list["metadata"].(map[string]any)["resourceVersion"].(string)
	req, _ := http.NewRequest("GET", kube.server+configMaps+"?watch=1&resourceVersion="+url.QueryEscape(version), nil)
	req.Header.Set("Authorization", "Bearer "+kube.token)
	resp, err := kube.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if status, body := kube.do(t, "POST", configMaps, configMap("go-watched")); status != 201 {
		t.Fatalf("create: %d %v", status, body)
	}
	var event struct {
		Type   string
		Object struct{ Metadata struct{ Name string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&event); err != nil {
		t.Fatal(err)
	}
	if event.Type != "ADDED" || event.Object.Metadata.Name != "go-watched" {
		t.Fatalf("event: %+v", event)
	}
}

func TestAListInPages(t *testing.T) {
	for _, name := range []string{"go-p1", "go-p2", "go-p3"} {
		if status, body := kube.do(t, "POST", configMaps, configMap(name)); status != 201 {
			t.Fatalf("create: %d %v", status, body)
		}
	}
	seen := 0
	next := ""
	for pages := 0; ; pages++ {
		_, page := kube.do(t, "GET", configMaps+"?labelSelector=app%3Dgo-test&limit=2&continue="+url.QueryEscape(next), nil)
		seen += len(page["items"].([]any))
		next, _ = page["metadata"].(map[string]any)["continue"].(string)
		if next == "" {
			if pages < 1 || seen < 3 {
				t.Fatalf("%d objects in %d pages", seen, pages+1)
			}
			return
		}
	}
}
