"""Provider lists as onnxruntime's InferenceSession takes them (names, (name, options) pairs, or names with a parallel
list of options), normalized to a list of names and one str -> str options dict per name."""

import collections.abc
import warnings


def check_and_normalize_provider_args(providers, provider_options, available_provider_names):
    """Returns (names, options). A name given twice keeps its first options; a name that is not available is kept;
    both warn (UserWarning), as in onnxruntime. Malformed arguments raise ValueError."""
    if providers is None:
        return [], []
    if not _is_sequence(providers):
        raise ValueError(f"'providers' should be a sequence, got {type(providers).__name__}.")
    if provider_options is not None:
        if not _is_sequence(provider_options):
            raise ValueError(f"'provider_options' should be a sequence, got {type(provider_options).__name__}.")
        if len(provider_options) != len(providers):
            raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
    pairs = [_name_and_options(p, provider_options is not None) for p in providers]
    if provider_options is not None:
        pairs = [(name, _options_dict(options)) for (name, _), options in zip(pairs, provider_options)]
    normalized = {}
    for name, options in pairs:
        if name not in available_provider_names:
            warnings.warn(f"Specified provider '{name}' is not in available provider names. "
                          f"Available providers: '{', '.join(available_provider_names)}'")
        if name in normalized:
            warnings.warn(f"Duplicate provider '{name}' encountered, ignoring.")
            continue
        normalized[name] = {str(key): str(value) for key, value in options.items()}
    return list(normalized), list(normalized.values())


def _is_sequence(value):
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes))


def _name_and_options(provider, options_given_apart):
    if isinstance(provider, str):
        return provider, {}
    if isinstance(provider, tuple) and len(provider) == 2 and isinstance(provider[0], str):
        if options_given_apart:
            raise ValueError("'providers' may hold (name, options) pairs only when 'provider_options' is not given.")
        return provider[0], _options_dict(provider[1])
    raise ValueError(f"'providers' should hold names or (name, options dict) pairs, got {provider!r}.")


def _options_dict(options):
    if not isinstance(options, dict):
        raise ValueError(f"provider options should be a dict, got {options!r}.")
    return options
