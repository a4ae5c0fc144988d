//! A schedule written out (`explore` prints one per final store) reads back as itself.

use interp::exec::Schedule;
use proptest::prelude::*;

fn schedule() -> impl Strategy<Value = Schedule> {
    prop::collection::vec((0usize..6, 1u64..5), 1..30).prop_map(|runs| {
        let mut s = Schedule::default();
        for (t, n) in runs {
            for _ in 0..n {
                s.push(t);
            }
        }
        s
    })
}

proptest! {
    #[test]
    fn text_reads_back(s in schedule()) {
        prop_assert_eq!(Schedule::parse(&s.text()), Ok(s));
    }
}

#[test]
fn ascii_spellings_and_commas_read_as_the_times_sign() {
    let s = Schedule::parse("0 1x2, 2*3 2").unwrap();
    assert_eq!(s.runs, vec![(0, 1), (1, 2), (2, 4)]);
}

#[test]
fn a_malformed_run_is_named() {
    for (text, bad) in [("0 1×0", "1×0"), ("0 a", "a"), ("0 1×", "1×"), ("-1", "-1")] {
        let e = Schedule::parse(text).unwrap_err();
        assert!(e.contains(&format!("`{bad}`")), "{text}: {e}");
    }
    assert_eq!(Schedule::parse("  ").unwrap_err(), "the schedule is empty");
}
