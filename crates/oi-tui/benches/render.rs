//! The live view fed a recorded reply as a model streams it: about 2,000
//! tokens of Markdown (headings, lists, a table, block quotes, highlighted
//! code) in pieces of ~4 characters, into a 100-column terminal. The
//! reported throughput is tokens per second of rendering work; a model
//! streaming 2,000 tokens/s needs it well above that.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench code: a panic is a failed benchmark"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oi_protocol::{Event, OutputStream, RunId};
use oi_tui::highlight::Palette;
use oi_tui::{Mode, View};

/// A reply like a model's: prose, structure and code, repeated to size.
fn recorded_reply() -> String {
    let section = r#"## Step {n}: loading the data

First I read **sales.csv** with *pandas* and look at the columns. The file has
`12,000` rows; a few of them have an empty `amount`, which I drop — see the
[pandas docs](https://pandas.pydata.org) for `dropna`.

- parse the `date` column as dates
- group by month, then by region
  - sum the amounts
  - count the orders
- write the report to `report.md`

> Note: amounts are in EUR; refunds are negative and kept.

| month | region | total | orders |
|-------|--------|------:|-------:|
| Jan   | north  | 1,204 | 31     |
| Feb   | south  |   980 | 27     |
| Mar   | east   | 2,310 | 44     |

```python
import pandas as pd

df = pd.read_csv("sales.csv", parse_dates=["date"])
df = df.dropna(subset=["amount"])
monthly = (
    df.groupby([df["date"].dt.to_period("M"), "region"])["amount"]
    .agg(["sum", "count"])
    .rename(columns={"sum": "total", "count": "orders"})
)
for (month, region), row in monthly.iterrows():
    print(f"{month} {region:>8} {row.total:>10.2f} {row.orders:>5}")
```

That gives one line per month and region. 日本語のテキストも折り返します 🎉.

"#;
    (1..=6)
        .map(|n| section.replace("{n}", &n.to_string()))
        .collect()
}

/// Pieces of about four characters (a token's average), on char boundaries.
fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

fn render(c: &mut Criterion) {
    let reply = recorded_reply();
    let pieces = tokens(&reply);
    let mut events = vec![Event::TaskStarted, Event::ModelRequest { turn: 1 }];
    events.extend(pieces.iter().map(|p| Event::TextDelta { delta: p.clone() }));
    events.push(Event::AssistantMessage {
        text: reply.clone(),
    });

    let mut group = c.benchmark_group("render");
    group.throughput(Throughput::Elements(pieces.len() as u64));
    group.bench_function(format!("reply_{}_tokens", pieces.len()), |b| {
        b.iter(|| {
            let mut view = View::with_mode(Vec::with_capacity(1 << 20), Mode::Live, 100, 40)
                .with_palette(Palette::TrueColor);
            for event in &events {
                view.event(event).unwrap();
            }
            view.into_inner().len()
        });
    });

    // The worst case: the live region redrawn after every token (as if
    // each arrived a frame apart), so none of the work is skipped.
    group.bench_function(format!("reply_{}_tokens_redraw_each", pieces.len()), |b| {
        b.iter(|| {
            let mut view = View::with_mode(Vec::with_capacity(1 << 22), Mode::Live, 100, 40)
                .with_palette(Palette::TrueColor);
            for event in &events {
                view.event(event).unwrap();
                view.tick().unwrap();
            }
            view.into_inner().len()
        });
    });

    // Output of a running program: 5,000 lines in pieces, some unfinished.
    let id = RunId(1);
    let mut run = vec![Event::RunStarted {
        id,
        language: "python".into(),
        code: String::new(),
    }];
    for i in 0..5000 {
        run.push(Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: format!("row {i}: value={} ok\nprogress {i}", i * 7),
        });
    }
    group.throughput(Throughput::Elements(5000));
    group.bench_function("output_5000_lines", |b| {
        b.iter(|| {
            let mut view = View::with_mode(Vec::with_capacity(1 << 20), Mode::Live, 100, 40)
                .with_palette(Palette::TrueColor);
            for event in &run {
                view.event(event).unwrap();
            }
            view.into_inner().len()
        });
    });
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
