package settings

// Described is one setting as the settings reference
// (docs/operations/settings.md) shows it: read from the same table that Load
// parses, so the page cannot name a setting, a flag or a default the bridge
// does not have.
type Described struct {
	Env     string // the environment variable
	Flag    string // the command-line flag, without its dashes
	Default string // empty when the setting has none or computes it
	Usage   string // the flag's help text
}

// Reference lists every setting in the order of the contract.
func Reference() []Described {
	specs := specsFor(&Settings{})
	out := make([]Described, len(specs))
	for i, d := range specs {
		out[i] = Described{Env: d.env, Flag: d.flagName(), Default: d.def, Usage: d.usage}
	}
	return out
}
