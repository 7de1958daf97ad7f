package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gengate/gengate"
	"github.com/gengate/gengate/internal/engine/builtin"
	"github.com/gengate/gengate/internal/engine/comfyui"
	"github.com/gengate/gengate/internal/engine/fal"
	"github.com/gengate/gengate/internal/engine/google"
	"github.com/gengate/gengate/internal/engine/openai"
	"github.com/gengate/gengate/internal/engine/replicate"
	"github.com/gengate/gengate/internal/engine/sandbox"
	"github.com/gengate/gengate/internal/engine/upstream"
	"github.com/gengate/gengate/internal/httpapi"
)

type upstreamConfig = upstream.Config

// fileConfig is the --config YAML file: upstream providers and the routes
// of models to them. docs/providers.md documents it.
type fileConfig struct {
	Providers map[string]providerConfig `yaml:"providers"`
	// Routes lists, per catalog model id, the routes tried in order:
	// {provider, model, ...} where the other keys are upstream parameters.
	Routes map[string][]map[string]any `yaml:"routes"`
	// Serve holds serve's settings by flag name (configlayers.go).
	Serve yaml.Node `yaml:"serve"`
}

// providerConfig configures one upstream provider. Type is the engine
// kind (fal, replicate, openai, google, vertex, comfyui,
// openai-compatible); it defaults to the provider's name, so only extra
// instances such as a LocalAI server need it.
type providerConfig struct {
	Type    string `yaml:"type"`
	APIKey  string `yaml:"apiKey"`
	BaseURL string `yaml:"baseUrl"`
	// Vertex AI only: the Google Cloud project and location, and a service
	// account key file (Application Default Credentials without one). The
	// file's contents are read once and never logged.
	Project         string `yaml:"project"`
	Location        string `yaml:"location"`
	CredentialsFile string `yaml:"credentialsFile"`
	// engineFlags are the serve flags every provider engine shares.
	engineFlags
}

// engineFlags are the serve flags every provider engine shares.
type engineFlags struct {
	// allowPrivate is --allow-private-inputs: output downloads from hosts
	// other than the provider's own may reach private addresses.
	allowPrivate bool
	// downloadTimeout is --output-download-timeout: the longest one
	// output download may take, into storage.
	downloadTimeout time.Duration
	// idleConns is --workers: the most idle connections kept to each
	// provider, as many as the steps that may call it at once.
	idleConns int
}

func (p providerConfig) upstream() upstreamConfig {
	return upstreamConfig{APIKey: p.APIKey, BaseURL: p.BaseURL, AllowPrivateOutputs: p.allowPrivate,
		DownloadTimeout: p.downloadTimeout, IdleConns: p.idleConns}
}

// providerEnv is the usual environment variable of each provider: setting
// it alone configures the provider with its real base URL. COMFYUI_URL is
// a base URL, the others are API keys.
var providerEnv = map[string]string{
	"fal":       "FAL_KEY",
	"replicate": "REPLICATE_API_TOKEN",
	"openai":    "OPENAI_API_KEY",
	"google":    "GEMINI_API_KEY",
	"comfyui":   "COMFYUI_URL",
}

// engineKinds builds an engine of each kind from its provider settings.
var engineKinds = map[string]func(name string, p providerConfig) (gengate.Engine, error){
	"comfyui": func(_ string, p providerConfig) (gengate.Engine, error) {
		return comfyui.New(p.upstream()), nil
	},
	"fal": func(_ string, p providerConfig) (gengate.Engine, error) {
		return fal.New(p.upstream()), nil
	},
	"google": func(_ string, p providerConfig) (gengate.Engine, error) {
		return google.New(p.upstream()), nil
	},
	"openai": func(_ string, p providerConfig) (gengate.Engine, error) {
		return openai.New(p.upstream()), nil
	},
	"vertex": func(name string, p providerConfig) (gengate.Engine, error) {
		switch {
		case p.APIKey != "":
			return nil, errors.New("vertex takes credentialsFile (a service account key) or Application Default Credentials, not apiKey")
		case p.Project == "" || p.Location == "":
			return nil, errors.New("vertex needs project and location")
		}
		return google.NewVertex(name, google.VertexConfig{Project: p.Project, Location: p.Location,
			CredentialsFile: p.CredentialsFile, BaseURL: p.BaseURL, AllowPrivateOutputs: p.allowPrivate,
			DownloadTimeout: p.downloadTimeout, IdleConns: p.idleConns})
	},
	"openai-compatible": func(name string, p providerConfig) (gengate.Engine, error) {
		if p.BaseURL == "" {
			return nil, errors.New("an openai-compatible provider needs baseUrl")
		}
		return openai.NewCompatible(name, p.upstream()), nil
	},
	"replicate": func(_ string, p providerConfig) (gengate.Engine, error) {
		return replicate.New(p.upstream()), nil
	},
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${NAME} with the environment variable's value; an unset
// variable is an error naming it (never its value).
func expand(field, s string, getenv func(string) string) (string, error) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s: environment variable %s is not set", field, missing[0])
	}
	return out, nil
}

// loadFileConfig reads the --config file; an empty path is no file.
func loadFileConfig(path string) (*fileConfig, error) {
	fc := &fileConfig{}
	if path == "" {
		return fc, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(fc); err != nil && !errors.Is(err, io.EOF) { // an empty file is no settings
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fc, nil
}

// engines holds what the configuration turned into.
type engines struct {
	All map[string]gengate.Engine
	// Providers names the configured upstream providers, sorted.
	Providers []string
	Routes    map[string][]gengate.Route
	// BaseURLs holds each provider's base URL, for reachability probes.
	BaseURLs map[string]string
}

// buildEngines makes the engines of the configuration: the sandbox and the
// built-in engines always, and one engine per configured provider, from
// the file or, with no file entry, from the provider's usual environment
// variable. Secrets are used only to build the engines.
func buildEngines(fc *fileConfig, catalog *gengate.Catalog, getenv func(string) string, sandboxDelay time.Duration, shared engineFlags) (*engines, error) {
	out := &engines{All: map[string]gengate.Engine{"sandbox": sandbox.New(sandboxDelay), "builtin": builtin.New()},
		Routes: map[string][]gengate.Route{}, BaseURLs: map[string]string{}}
	providers := map[string]providerConfig{}
	for name, env := range providerEnv {
		if v := getenv(env); v != "" {
			p := providerConfig{Type: name, APIKey: v}
			if name == "comfyui" {
				p = providerConfig{Type: name, BaseURL: v, APIKey: getenv("COMFYUI_API_KEY")}
			}
			providers[name] = p
		}
	}
	for name, p := range fc.Providers {
		if name == "sandbox" || name == "builtin" {
			return nil, fmt.Errorf("providers.%s: %s is built in and takes no settings", name, name)
		}
		var err error
		if p.APIKey, err = expand("providers."+name+".apiKey", p.APIKey, getenv); err != nil {
			return nil, err
		}
		if p.BaseURL, err = expand("providers."+name+".baseUrl", p.BaseURL, getenv); err != nil {
			return nil, err
		}
		for field, v := range map[string]*string{"project": &p.Project, "location": &p.Location, "credentialsFile": &p.CredentialsFile} {
			if *v, err = expand("providers."+name+"."+field, *v, getenv); err != nil {
				return nil, err
			}
		}
		if p.Type == "" {
			p.Type = name
		}
		if p.Type != "vertex" && p.Project+p.Location+p.CredentialsFile != "" {
			return nil, fmt.Errorf("providers.%s: project, location and credentialsFile are Vertex AI settings (type: vertex)", name)
		}
		if env := providerEnv[p.Type]; p.APIKey == "" && p.Type != "comfyui" && env != "" && p.Type == name {
			p.APIKey = getenv(env)
		}
		if p.Type == "comfyui" && p.BaseURL == "" {
			p.BaseURL = getenv("COMFYUI_URL")
		}
		providers[name] = p
	}
	for name, p := range providers {
		p.engineFlags = shared
		build, ok := engineKinds[p.Type]
		if !ok {
			return nil, fmt.Errorf("providers.%s: unknown provider type %q (known: %s)", name, p.Type, strings.Join(kinds(), ", "))
		}
		eng, err := build(name, p)
		if err != nil {
			return nil, fmt.Errorf("providers.%s: %w", name, err)
		}
		out.All[name] = eng
		out.BaseURLs[name] = providerBaseURL(p)
		out.Providers = append(out.Providers, name)
	}
	sort.Strings(out.Providers)
	for modelID, list := range fc.Routes {
		if _, ok := catalog.Model(modelID); !ok {
			return nil, fmt.Errorf("routes.%s: no such model in the catalog", modelID)
		}
		routes := []gengate.Route{}
		for i, r := range list {
			field := fmt.Sprintf("routes.%s[%d]", modelID, i)
			provider, _ := r["provider"].(string)
			model, _ := r["model"].(string)
			if provider == "" {
				return nil, fmt.Errorf("%s: provider is required", field)
			}
			if _, ok := out.All[provider]; !ok {
				return nil, fmt.Errorf("%s: provider %q is not configured", field, provider)
			}
			if model == "" {
				model = modelID
			}
			params := map[string]any{}
			for k, v := range r {
				if k != "provider" && k != "model" {
					params[k] = v
				}
			}
			if len(params) == 0 {
				params = nil
			}
			routes = append(routes, gengate.Route{Engine: provider, Upstream: model, Params: params})
		}
		out.Routes[modelID] = routes
	}
	return out, nil
}

func kinds() []string {
	var k []string
	for name := range engineKinds {
		k = append(k, name)
	}
	sort.Strings(k)
	return k
}

// facades are the engines' inverse mappings the Replicate- and
// fal-compatible APIs take callers' inputs through (internal/httpapi,
// facades.go): whatever providers are configured, a caller names models
// and inputs as those providers do.
var facades = httpapi.Facades{
	ReplicateInput: replicate.Inverse, ReplicateVersion: replicate.Version,
	FalInput: fal.Inverse, FalVariants: fal.Variants,
}
