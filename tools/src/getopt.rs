// SPDX-License-Identifier: GPL-2.0

//! Command-line parsing with the behaviour of glibc's `getopt_long(3)`, so
//! that the tools take the same command lines as upstream's C tools:
//! clustered short options (`-al`), long options and their unique prefixes
//! (`--wid`), `--name=value` and `--name value`, `--` ending the options,
//! and operands anywhere (glibc permutes them to the end). Parsing yields
//! events in command-line order; the first error stops it, as upstream's
//! `usage()` does.

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    /// `no_argument`.
    No,
    /// `required_argument`.
    Required,
}

/// One option: its short letter (also the value a long option returns, as
/// upstream's `long_opts` tables map them) and its long name.
#[derive(Clone, Copy, Debug)]
pub struct Opt {
    /// The short letter, or the value of the long option.
    pub short: char,
    /// Whether `short` is in the short-option string (upstream's
    /// `--version` maps to `'V'`, which is not).
    pub short_ok: bool,
    /// The long name, without `--`.
    pub long: Option<&'static str>,
    /// Whether it takes an argument.
    pub has_arg: HasArg,
}

impl Opt {
    /// A flag with a short and a long form.
    pub const fn flag(short: char, long: &'static str) -> Opt {
        Opt {
            short,
            short_ok: true,
            long: Some(long),
            has_arg: HasArg::No,
        }
    }

    /// An option with an argument, short and long form.
    pub const fn with_arg(short: char, long: &'static str) -> Opt {
        Opt {
            short,
            short_ok: true,
            long: Some(long),
            has_arg: HasArg::Required,
        }
    }
}

/// What the command line said, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// An option (by its short letter) and its argument, if it takes one.
    Opt(char, Option<String>),
    /// A non-option argument.
    Operand(String),
    /// A parse error: the message glibc prints (without the program name
    /// and its colon); parsing stops.
    Error(String),
}

/// Parses `args` (without `argv[0]`) against `opts`.
pub fn parse<S: AsRef<str>>(args: &[S], opts: &[Opt]) -> Vec<Event> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let arg = args[i].as_ref();
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            out.push(Event::Operand(arg.to_string()));
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        let ev = if let Some(long) = arg.strip_prefix("--") {
            parse_long(long, args, &mut i, opts)
        } else {
            match parse_short_cluster(&arg[1..], args, &mut i, opts, &mut out) {
                Some(e) => e,
                None => continue,
            }
        };
        let stop = matches!(ev, Event::Error(_));
        out.push(ev);
        if stop {
            return out;
        }
    }
    out
}

fn parse_long<S: AsRef<str>>(body: &str, args: &[S], i: &mut usize, opts: &[Opt]) -> Event {
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let exact = opts.iter().find(|o| o.long == Some(name));
    let opt = match exact {
        Some(o) => o,
        None => {
            let cands: Vec<&Opt> = opts
                .iter()
                .filter(|o| o.long.is_some_and(|l| l.starts_with(name)))
                .collect();
            match cands.as_slice() {
                [] => return Event::Error(format!("unrecognized option '--{name}'")),
                [one] => *one,
                many => {
                    // glibc accepts an ambiguous prefix whose candidates all
                    // mean the same; ours never do.
                    let list: Vec<String> = many
                        .iter()
                        .filter_map(|o| o.long.map(|l| format!("'--{l}'")))
                        .collect();
                    return Event::Error(format!(
                        "option '--{name}' is ambiguous; possibilities: {}",
                        list.join(" ")
                    ));
                }
            }
        }
    };
    let long = opt.long.unwrap_or(name);
    match (opt.has_arg, value) {
        (HasArg::No, Some(_)) => {
            Event::Error(format!("option '--{long}' doesn't allow an argument"))
        }
        (HasArg::No, None) => Event::Opt(opt.short, None),
        (HasArg::Required, Some(v)) => Event::Opt(opt.short, Some(v.to_string())),
        (HasArg::Required, None) => match args.get(*i) {
            Some(v) => {
                *i += 1;
                Event::Opt(opt.short, Some(v.as_ref().to_string()))
            }
            None => Event::Error(format!("option '--{long}' requires an argument")),
        },
    }
}

/// Parses `-abc`; pushes all but the last event to `out` and returns the
/// last one (`None` for an empty cluster, which cannot happen).
fn parse_short_cluster<S: AsRef<str>>(
    cluster: &str,
    args: &[S],
    i: &mut usize,
    opts: &[Opt],
    out: &mut Vec<Event>,
) -> Option<Event> {
    let mut last = None;
    for (at, c) in cluster.char_indices() {
        if let Some(prev) = last.take() {
            out.push(prev);
        }
        let Some(opt) = opts.iter().find(|o| o.short_ok && o.short == c) else {
            return Some(Event::Error(format!("invalid option -- '{c}'")));
        };
        if opt.has_arg == HasArg::Required {
            let rest = &cluster[at + c.len_utf8()..];
            if !rest.is_empty() {
                return Some(Event::Opt(c, Some(rest.to_string())));
            }
            return Some(match args.get(*i) {
                Some(v) => {
                    *i += 1;
                    Event::Opt(c, Some(v.as_ref().to_string()))
                }
                None => Event::Error(format!("option requires an argument -- '{c}'")),
            });
        }
        last = Some(Event::Opt(c, None));
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: &[Opt] = &[
        Opt::flag('a', "all"),
        Opt::flag('d', "debug"),
        Opt::flag('D', "smcd"),
        Opt::flag('R', "smcr"),
        Opt::with_arg('I', "interface"),
    ];

    fn p(args: &[&str]) -> Vec<Event> {
        parse(args, OPTS)
    }

    #[test]
    fn short_clusters_and_long() {
        assert_eq!(
            p(&["-ad", "--smcr", "x", "--al"]),
            vec![
                Event::Opt('a', None),
                Event::Opt('d', None),
                Event::Opt('R', None),
                Event::Operand("x".into()),
                Event::Opt('a', None),
            ]
        );
    }

    #[test]
    fn errors_as_glibc() {
        assert_eq!(
            p(&["-ax", "-d"]).last(),
            Some(&Event::Error("invalid option -- 'x'".into()))
        );
        assert_eq!(p(&["-ax", "-d"]).len(), 2);
        assert_eq!(
            p(&["--foo"]),
            vec![Event::Error("unrecognized option '--foo'".into())]
        );
        assert_eq!(
            p(&["--smc"]),
            vec![Event::Error(
                "option '--smc' is ambiguous; possibilities: '--smcd' '--smcr'".into()
            )]
        );
        assert_eq!(
            p(&["--all=1"]),
            vec![Event::Error(
                "option '--all' doesn't allow an argument".into()
            )]
        );
        assert_eq!(
            p(&["--interface"]),
            vec![Event::Error(
                "option '--interface' requires an argument".into()
            )]
        );
        assert_eq!(
            p(&["-I"]),
            vec![Event::Error("option requires an argument -- 'I'".into())]
        );
    }

    #[test]
    fn arguments() {
        assert_eq!(p(&["-Ieth0"]), vec![Event::Opt('I', Some("eth0".into()))]);
        assert_eq!(
            p(&["-aI", "eth0"]),
            vec![Event::Opt('a', None), Event::Opt('I', Some("eth0".into()))]
        );
        assert_eq!(
            p(&["--interface=eth0"]),
            vec![Event::Opt('I', Some("eth0".into()))]
        );
        assert_eq!(
            p(&["--inter", "eth0"]),
            vec![Event::Opt('I', Some("eth0".into()))]
        );
    }

    #[test]
    fn double_dash_and_dash() {
        assert_eq!(
            p(&["-", "--", "-a"]),
            vec![Event::Operand("-".into()), Event::Operand("-a".into())]
        );
    }

    #[test]
    fn long_only_value() {
        let opts = [Opt {
            short: 'V',
            short_ok: false,
            long: Some("version"),
            has_arg: HasArg::No,
        }];
        assert_eq!(parse(&["--version"], &opts), vec![Event::Opt('V', None)]);
        assert_eq!(
            parse(&["-V"], &opts),
            vec![Event::Error("invalid option -- 'V'".into())]
        );
    }
}
