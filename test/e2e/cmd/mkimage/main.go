// Command mkimage writes an image as a docker-archive without a container
// engine (see package image), for the end-to-end cluster
// (hack/e2e-images.sh):
//
//	mkimage -out msgbridge.tar -ref localhost/msgbridge:e2e msgbridge -manager bin/manager -bridge bin/bridge
//	mkimage -out pause.tar -ref localhost/pause:e2e program -name pause -binary bin/pause -user 65535:65535
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/msgbridge/msgbridge/test/e2e/image"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	top := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	out := top.String("out", "", "docker-archive to write")
	ref := top.String("ref", "", "image name and tag, e.g. localhost/msgbridge:e2e")
	if err := top.Parse(args); err != nil {
		return err
	}
	if *out == "" || *ref == "" || top.NArg() == 0 {
		return errors.New("usage: mkimage -out FILE -ref REF msgbridge|program [flags]")
	}
	layout, err := parseLayout(top.Arg(0), top.Args()[1:])
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := image.WriteDockerArchive(w, *ref, layout); err != nil {
		_ = f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func parseLayout(kind string, args []string) (image.Layout, error) {
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	switch kind {
	case "msgbridge":
		manager := fs.String("manager", "", "the operator's static binary")
		bridge := fs.String("bridge", "", "the bridge's static binary")
		ca := fs.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to copy")
		version := fs.String("version", "dev", "org.opencontainers.image.version")
		if err := fs.Parse(args); err != nil {
			return image.Layout{}, err
		}
		if *manager == "" || *bridge == "" {
			return image.Layout{}, errors.New("msgbridge needs -manager and -bridge")
		}
		return image.Msgbridge(*manager, *bridge, *ca, *version), nil
	case "program":
		name := fs.String("name", "", "the program's name: it runs as /NAME")
		binary := fs.String("binary", "", "its static binary")
		user := fs.String("user", "65532:65532", "uid:gid it runs as")
		if err := fs.Parse(args); err != nil {
			return image.Layout{}, err
		}
		if *name == "" || *binary == "" {
			return image.Layout{}, errors.New("program needs -name and -binary")
		}
		return image.Program(*name, *binary, *user), nil
	default:
		return image.Layout{}, fmt.Errorf("unknown image kind %q (msgbridge or program)", kind)
	}
}
