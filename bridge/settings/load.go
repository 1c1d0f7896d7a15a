package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrHelp is returned by Load when the arguments asked for -h or --help.
var ErrHelp = flag.ErrHelp

// Load reads every setting from args (the command line without the program
// name), falling back to lookupEnv (os.LookupEnv in production) and then to
// the default. Its error is one line naming the first invalid setting.
// Usage text for --help goes to usage.
func Load(args []string, lookupEnv func(string) (string, bool), usage io.Writer) (*Settings, error) {
	s := &Settings{}
	specs := specsFor(s)
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(usage)
	flags := make([]*string, len(specs))
	for i, d := range specs {
		flags[i] = fs.String(d.flagName(), "", fmt.Sprintf("%s (env %s, default %q)", d.usage, d.env, d.def))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, fmt.Errorf("command line: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("command line: unexpected argument %q (settings are --name=value flags)", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	for i, d := range specs {
		text, source := d.def, "default"
		if v, ok := lookupEnv(d.env); ok && v != "" {
			text, source = v, "environment"
		}
		if given[d.flagName()] {
			text, source = *flags[i], "flag"
		}
		if err := d.parse(text); err != nil {
			return nil, fmt.Errorf("setting %s (--%s, from %s): %w", d.env, d.flagName(), source, err)
		}
	}
	return s, nil
}
