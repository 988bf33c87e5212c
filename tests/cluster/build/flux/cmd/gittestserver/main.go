// Command gittestserver serves Git repositories over HTTP on loopback for the cluster tier's
// upstream set: Flux's own test server (github.com/fluxcd/pkg/gittestserver, the one
// source-controller's tests use), with each repository made from a fixture directory at start.
//
//	gittestserver -root DIR -branch main -repo org/app.git=FIXTURE_DIR [-repo ...]
//
// It prints its URL (http://127.0.0.1:PORT) on one line of stdout once serving, and serves until
// SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fluxcd/pkg/gittestserver"
)

type repos []string

func (r *repos) String() string     { return strings.Join(*r, ",") }
func (r *repos) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	root := flag.String("root", "", "directory holding the bare repositories")
	branch := flag.String("branch", "main", "branch each fixture is committed to")
	var initial repos
	flag.Var(&initial, "repo", "PATH=FIXTURE_DIR: a repository at PATH with FIXTURE_DIR committed (repeatable)")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "gittestserver: -root is required")
		os.Exit(2)
	}
	srv := gittestserver.NewGitServer(*root)
	for _, spec := range initial {
		path, fixture, ok := strings.Cut(spec, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "gittestserver: -repo %q is not PATH=FIXTURE_DIR\n", spec)
			os.Exit(2)
		}
		if err := srv.InitRepo(fixture, *branch, path); err != nil {
			fmt.Fprintf(os.Stderr, "gittestserver: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
	if err := srv.StartHTTP(); err != nil {
		fmt.Fprintf(os.Stderr, "gittestserver: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(srv.HTTPAddress())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	srv.StopHTTP()
}
