//! The reductions are sound: on every preset, and on every preset of every planted bug
//! of the zoo, the search with canonical message ids (`check --reduce ids`), with
//! canonical request ids (`requests`), with the partial-order reduction (`por`) and the
//! depth-first search (`check --search dfs`) find the same verdicts (the same `always`
//! properties violated, the same `sometimes` reached) as the plain breadth-first one;
//! the depth-first one covers exactly the same states, and the reductions never more.
//! A canonical form that merges states it must not, and a partial order that delivers
//! a read answer first (both planted below), show here.
//!
//! The whole zoo is `#[ignore]`d (minutes even in a release build):
//! `cargo test --release -p payhub-properties --test reduction -- --ignored` (depth
//! first, each search bounded to 3 million generated states, so in bounded memory).

use payhub_properties::PROPERTIES;
use payhub_properties::checker::{self, Limits, Order, Search, Searched};
use payhub_properties::presets::{self, Preset};
use payhub_properties::zoo::Subject;

const PLAIN: Search = Search {
    order: Order::Breadth,
    canonical_ids: false,
    canonical_requests: false,
    partial_order: None,
    bitstate: None,
    interrupted: None,
};
const IDS: Search = Search {
    canonical_ids: true,
    ..PLAIN
};
const REQUESTS: Search = Search {
    canonical_requests: true,
    ..PLAIN
};
/// `--reduce requests,por`, as a user runs the partial-order reduction.
const POR: Search = Search {
    canonical_requests: true,
    partial_order: Some(checker::INERT_FIRST),
    ..PLAIN
};
const POR_ALONE: Search = Search {
    partial_order: Some(checker::INERT_FIRST),
    ..PLAIN
};
const DFS: Search = Search {
    order: Order::Depth,
    ..PLAIN
};
const DFS_IDS: Search = Search {
    order: Order::Depth,
    canonical_ids: true,
    ..PLAIN
};

/// The presets a debug build takes seconds on: checked in a release build only.
const SLOW: &[&str] = &["card-retry", "create-lossy"];

fn limits(max_states: Option<usize>) -> Limits {
    Limits {
        threads: 2,
        max_states,
        ..Limits::default()
    }
}

fn names(bits: u128) -> Vec<&'static str> {
    PROPERTIES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, p)| p.name)
        .collect()
}

/// The differences between two searches' verdicts, if any.
fn differ(a: &Searched, b: &Searched) -> Option<String> {
    (a.violated != b.violated || a.reached != b.reached).then(|| {
        format!(
            "violated {:?} against {:?}, reached {:?} against {:?}",
            names(a.violated),
            names(b.violated),
            names(a.reached),
            names(b.reached)
        )
    })
}

fn run(preset: &Preset, how: Search, max_states: Option<usize>) -> Searched {
    checker::search(preset, limits(max_states), how, false).expect("the preset builds")
}

#[test]
fn every_preset_gives_the_same_verdicts_with_each_reduction() {
    let mut fewer_with_por = 0;
    for preset in presets::presets() {
        if cfg!(debug_assertions) && SLOW.contains(&preset.name) {
            continue;
        }
        let plain = run(&preset, PLAIN, None);
        assert!(plain.complete, "{}", preset.name);
        let ids = run(&preset, IDS, None);
        for (how, r, like) in [
            ("ids", &ids, &plain),
            ("requests", &run(&preset, REQUESTS, None), &ids),
            ("por", &run(&preset, POR_ALONE, None), &plain),
            ("requests+por", &run(&preset, POR, None), &plain),
            ("dfs", &run(&preset, DFS, None), &plain),
            ("dfs+ids", &run(&preset, DFS_IDS, None), &ids),
        ] {
            assert!(r.complete, "{} {how}", preset.name);
            if let Some(d) = differ(r, &plain) {
                panic!("{} with {how}: {d}", preset.name);
            }
            let (e, l) = (&r.explored, &like.explored);
            if how.starts_with("dfs") {
                assert_eq!(
                    (e.unique_states, e.total_states),
                    (l.unique_states, l.total_states),
                    "{} {how}: depth first covers what breadth first covers",
                    preset.name
                );
            } else {
                assert!(e.unique_states <= l.unique_states, "{} {how}", preset.name);
            }
            if how == "por" && e.unique_states < l.unique_states {
                fewer_with_por += 1;
            }
        }
    }
    // The reduction is wired into the search's actions, not only defined.
    eprintln!("por reduced {fewer_with_por} presets");
    assert!(fewer_with_por > 0, "por reduced no preset");
}

/// Compares each subject's presets both ways (in `order`), in the zoo's order, up to
/// the first that catches it: the same verdicts on each. Searches cut by `max_states`
/// (generated states) are skipped.
/// Returns how many presets caught a subject (with both searches).
fn zoo_alike(max_states: Option<usize>, presets: usize, order: Order) -> usize {
    let mut caught = 0;
    for subject in Subject::all() {
        for preset in subject.presets().into_iter().take(presets) {
            let plain = run(&preset, Search { order, ..PLAIN }, max_states);
            let ids = run(&preset, Search { order, ..IDS }, max_states);
            let requests = run(&preset, Search { order, ..REQUESTS }, max_states);
            let por = run(&preset, Search { order, ..POR }, max_states);
            // In a breadth-first comparison, the partial order depth first too (not the
            // other way: a breadth-first search of a mutant is unbounded in memory).
            let por_dfs = (order == Order::Breadth).then(|| {
                run(
                    &preset,
                    Search {
                        order: Order::Depth,
                        ..POR
                    },
                    max_states,
                )
            });
            let searches = [&plain, &ids, &requests, &por];
            if searches
                .iter()
                .chain(por_dfs.as_ref().iter())
                .any(|r| !r.complete)
            {
                continue;
            }
            let mut compared = vec![("ids", &ids), ("requests", &requests), ("por", &por)];
            compared.extend(por_dfs.as_ref().map(|r| ("dfs, por", r)));
            for (how, r) in compared {
                if let Some(d) = differ(r, &plain) {
                    panic!("{} on {} with {how}: {d}", subject.name(), preset.name);
                }
            }
            if plain.violated != 0 {
                caught += 1;
                break;
            }
        }
    }
    caught
}

/// Every subject the plain search catches on one of its first three presets, within
/// 1 500 states, is caught alike with canonical ids (the rest is the ignored test's).
#[test]
fn the_zoo_is_caught_alike_on_its_small_presets() {
    let caught = zoo_alike(Some(1_500), 3, Order::Breadth);
    eprintln!("{caught} subjects caught alike");
    assert!(caught >= 10, "only {caught} subjects compared");
}

#[test]
#[ignore = "minutes: cargo test --release -p payhub-properties --test reduction -- --ignored"]
fn the_whole_zoo_is_caught_alike() {
    // Depth first (memory: a path, not a level; the test above shows it judges as the
    // breadth-first search does) and bounded: a mutant's state space can be unbounded,
    // and a breadth-first search of one took 24 GB before the OOM killer ended it.
    let caught = zoo_alike(Some(3_000_000), usize::MAX, Order::Depth);
    eprintln!("{caught} subjects caught alike");
    assert!(caught >= 20, "only {caught} subjects compared");
}

/// Every preset, and the first preset of each zoo subject (whose breaches leave ids and
/// witnesses in the facts).
fn every_preset_and_one_per_subject() -> Vec<Preset> {
    let mut presets: Vec<Preset> = presets::presets();
    for subject in Subject::all() {
        presets.extend(subject.presets().into_iter().take(1));
    }
    presets
}

/// The request ids a world's debug rendering shows, each once.
fn request_ids_shown(world: &payhub_properties::World) -> std::collections::BTreeSet<u32> {
    let text = format!("{world:?}");
    text.split("RequestId(")
        .skip(1)
        .map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().expect("RequestId(n)")
        })
        .collect()
}

/// The request-id renaming (`check --reduce requests`, sim/src/canonical.rs) reaches
/// every id a world holds: in every state of every preset (and of the zoo's subjects,
/// whose breaches leave ids in the facts as witnesses), within a bound, the renamed
/// copy shows exactly the ids 1..n and no other. An id in a place the renaming does not
/// know would keep its number (above n, or not in order), and this fails.
#[test]
fn renaming_reaches_every_request_id() {
    use std::sync::Mutex;
    let wrong: Mutex<Option<String>> = Mutex::default();
    let renamed_states = std::sync::atomic::AtomicUsize::new(0);
    let check = |w: &payhub_properties::World| {
        let shown = request_ids_shown(w);
        let renamed = w.requests_renumbered();
        let after = request_ids_shown(&renamed);
        let expected: std::collections::BTreeSet<u32> = (1..=shown.len() as u32).collect();
        if after != expected {
            let text = format!("{renamed:?}");
            let at = text
                .find(&format!("RequestId({})", after.last().unwrap()))
                .unwrap();
            wrong.lock().unwrap().get_or_insert(format!(
                "ids {shown:?} renamed to {after:?}, not 1..={}: ...{}...",
                shown.len(),
                &text[at.saturating_sub(300)..(at + 40).min(text.len())]
            ));
        }
        if shown != expected {
            renamed_states.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        payhub_properties::engine::fingerprint(w)
    };
    let presets = every_preset_and_one_per_subject();
    for preset in &presets {
        checker::search_by(preset, limits(Some(300)), DFS, false, &check).expect("builds");
        if let Some(w) = wrong.lock().unwrap().take() {
            panic!("{}: {w}", preset.name);
        }
    }
    let renamed = renamed_states.into_inner();
    eprintln!("{renamed} states renamed");
    assert!(renamed > 500, "only {renamed} states needed renaming");
}

/// The first zoo subject and preset (of each subject's first `presets`) where the plain
/// search, within `bound` generated states, catches the subject and `other` (a planted
/// unsound reduction) completes with other verdicts.
fn first_judged_otherwise(
    presets: usize,
    bound: usize,
    other: &dyn Fn(&Preset) -> Searched,
) -> Option<(&'static str, &'static str)> {
    for subject in Subject::all() {
        for preset in subject.presets().into_iter().take(presets) {
            let plain = run(&preset, PLAIN, Some(bound));
            if !plain.complete || plain.violated == 0 {
                continue;
            }
            let bad = other(&preset);
            if bad.complete && differ(&bad, &plain).is_some() {
                return Some((subject.name(), preset.name));
            }
        }
    }
    None
}

/// The test can fail: a canonical form that forgets the facts (the history the
/// properties judge) merges states that differ in what was answered, and misses a
/// planted bug the plain search catches.
#[test]
fn a_canonical_form_that_merges_too_much_is_caught() {
    use payhub_properties::engine::fingerprint;
    let forgets_facts = |w: &payhub_properties::World| {
        fingerprint(&(w.now, &w.platform, &w.acquirer, &w.net, &w.link, w.budget))
    };
    let found = first_judged_otherwise(4, 3_000, &|preset| {
        checker::search_by(preset, limits(Some(3_000)), PLAIN, false, &forgets_facts)
            .expect("builds")
    });
    assert!(
        found.is_some(),
        "no difference: the comparison would miss an unsound reduction"
    );
}

/// What `check --reduce por` rests on (`sim/src/inert.rs`), state by state: in every
/// state of every preset and of one preset of each zoo subject (within a bound) that
/// holds an inert message, delivering it leaves everything but the network as it was,
/// facts included, and takes exactly that message out.
#[test]
fn delivering_an_inert_message_changes_nothing_but_the_network() {
    use std::sync::Mutex;
    let wrong: Mutex<Option<String>> = Mutex::default();
    let inert_states = std::sync::atomic::AtomicUsize::new(0);
    let presets = every_preset_and_one_per_subject();
    for preset in &presets {
        let config = &preset.config;
        let check = |w: &payhub_properties::World| {
            if let Some(msg) = w.inert_message() {
                inert_states.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut next = w.clone();
                let deliver = payhub_sim::Choice::Deliver { msg, branch: None };
                let outcome = next.apply(config, &deliver, None);
                let mut expected = w.clone();
                expected.net.take(msg);
                // The debug rendering too: a part that compares equal whatever it holds
                // (a cache such as `cow::Derived`) would hide a change from `!=`.
                if outcome.is_err()
                    || next != expected
                    || format!("{next:?}") != format!("{expected:?}")
                {
                    wrong.lock().unwrap().get_or_insert(format!(
                        "'{deliver}' ({outcome:?}) changed more than the network in {w:?}"
                    ));
                }
            }
            payhub_properties::engine::fingerprint(w)
        };
        checker::search_by(preset, limits(Some(2_000)), DFS, false, &check).expect("builds");
        if let Some(w) = wrong.lock().unwrap().take() {
            panic!("{}: {w}", preset.name);
        }
    }
    let n = inert_states.into_inner();
    eprintln!("{n} states with an inert message");
    assert!(n > 1_000, "only {n} states held an inert message");
}

/// The test can fail: a partial order that delivers *any* answer first, awaited ones
/// too, takes away a client's timeout while its answer is in flight (and every fault on
/// answers), and misses a planted bug the plain search catches (first found:
/// `key_claimed_after_charge` on `two-servers-one-order`).
#[test]
fn a_partial_order_that_delivers_a_read_answer_first_is_caught() {
    fn any_answer(w: &payhub_properties::World) -> Option<payhub_sim::MsgId> {
        w.net.iter().find_map(|(msg, payload)| {
            matches!(payload, payhub_sim::Payload::Response { .. }).then_some(msg)
        })
    }
    let planted = Search {
        partial_order: Some(any_answer),
        ..PLAIN
    };
    let found = first_judged_otherwise(usize::MAX, 30_000, &|preset| {
        run(preset, planted, Some(30_000))
    });
    eprintln!("caught on {found:?}");
    assert!(
        found.is_some(),
        "no difference: the comparison would miss an unsound partial order"
    );
}
