//! The layout's tests: no overlapping labels, elision, escaping, wrapping.
use super::*;
use crate::diagram::{Arrow, Diagram, Item, NoteKind, Shape};

/// 40 items among 5 participants, every kind, long bodies, a wide-character verdict:
/// the layout of what a long counterexample looks like.
fn busy() -> Diagram {
    let mut d = Diagram::default();
    for (id, label) in [
        ("M0", "merchant-0"),
        ("M1", "merchant-1"),
        ("P", "platform"),
        ("A", "acquirer"),
        ("Y", "payer"),
    ] {
        d.participant(id, label);
    }
    let body = "{\"merchant_order_no\":\"ORDER-1\",\"amount\":10000,\"currency\":\"USD\",\"payment_method\":{\"type\":\"card\",\"token\":\"tok_A\"},\"capture_method\":\"automatic\"}";
    for i in 0..40usize {
        let (from, to) = [
            (0, 2),
            (2, 0),
            (1, 2),
            (2, 3),
            (3, 2),
            (4, 2),
            (0, 4),
            (1, 3),
        ][i % 8];
        let note = |over, kind, text: String, rule: Option<&str>, at| Item {
            rule: rule.map(str::to_owned),
            at: Some(at),
            ..Item::new(Shape::Note { over, kind }, text)
        };
        let item = match i % 10 {
            7 => note(
                (i % 5, i % 5),
                NoteKind::Plain,
                format!(
                    "ORDER-{i}: timeout, the result is unknown; query by merchant_order_no {body}"
                ),
                Some("UNKNOWN-01"),
                i as u64 * 1500,
            ),
            8 => note(
                (0, 4),
                NoteKind::Clock,
                format!("(clock → {}s)", i * 2),
                None,
                i as u64 * 2000,
            ),
            9 => note(
                (2, 2),
                NoteKind::Crash,
                "(crash: memory lost, database kept)".into(),
                None,
                i as u64 * 2000,
            ),
            _ => Item {
                rule: Some("REPLAY-02".into()),
                at: Some(i as u64 * 1000),
                exchange: Some(format!("req-{i}")),
                witness: i % 4 == 0,
                ..Item::new(
                    Shape::Message {
                        from,
                        to,
                        arrow: [Arrow::Call, Arrow::Reply, Arrow::Lost][i % 3],
                    },
                    format!(
                        "POST /v1/payments  Idempotency-Key: k-{i}  {}",
                        body.repeat(1 + i % 3)
                    ),
                )
            },
        };
        d.items.push(item);
    }
    d.push_verdict(&"client-never-charges-an-order-twice [UNIQ-01, RES-02]: 同一商户订单号只会被接受一次 (one merchant_order_no is accepted once) ".repeat(3));
    d
}

#[test]
fn no_two_labels_overlap_at_forty_items_and_five_participants() {
    let d = busy();
    let l = layout(&d);
    let labels: Vec<&Label> = l
        .headers
        .iter()
        .chain(l.rows.iter().map(|r| &r.label))
        .chain(l.rows.iter().filter_map(|r| r.time.as_ref()))
        .collect();
    assert_eq!(
        labels.len(),
        5 + 41 + l.rows.iter().filter(|r| r.time.is_some()).count()
    );
    let page = Rect {
        x: 0.0,
        y: 0.0,
        w: l.width,
        h: l.height,
    };
    for (i, a) in labels.iter().enumerate() {
        assert!(
            page.contains(&a.rect),
            "label {i} {:?} outside {page:?}",
            a.rect
        );
        for (j, b) in labels.iter().enumerate().skip(i + 1) {
            assert!(
                !a.rect.overlaps(&b.rect),
                "labels {i} {:?} and {j} {:?} overlap: {:?} / {:?}",
                a.lines,
                b.lines,
                a.rect,
                b.rect
            );
        }
    }
    // Rows are stacked: each starts where the one before ended.
    for w in l.rows.windows(2) {
        assert!(w[1].y >= w[0].y + w[0].h - 1e-9);
    }
    // Five participants fit 1,280 px without scaling.
    assert!(l.width <= 1280.0, "{}", l.width);
}

#[test]
fn long_bodies_wrap_whole_and_past_four_lines_are_elided_with_the_full_text_on_hover() {
    let d = busy();
    let l = layout(&d);
    // A message longer than a line wraps, and keeps its ending (a lost answer's
    // "(response lost)" stays readable).
    let long = &l.rows[1];
    assert!(!long.label.elided);
    assert!(long.label.lines.len() > 1 && long.label.lines.len() <= MESSAGE_LINES_MAX);
    assert_eq!(
        long.label.lines.concat().replace(' ', ""),
        d.items[1].full_text().replace(' ', "")
    );
    assert!(
        long.line_y > long.label.rect.y + long.label.rect.h,
        "the arrow runs under its label"
    );
    // Past the lines a message may take, the label is elided and the whole text is its title.
    let mut d = busy();
    d.items[2].text = d.items[2].text.repeat(4);
    let l = layout(&d);
    let svg = d.to_svg();
    let long = &l.rows[2];
    assert!(long.label.elided);
    assert_eq!(long.label.lines.len(), MESSAGE_LINES_MAX);
    assert!(long.label.lines.last().unwrap().ends_with('…'));
    assert!(
        long.label
            .lines
            .iter()
            .all(|line| cells(line) <= LABEL_CELLS_MAX)
    );
    let full = escape(&d.items[2].full_text());
    assert!(
        svg.contains(&format!("<title>{full}</title>")),
        "no title with the full text"
    );
    // The verdict wraps (it is longer than a line) and is never cut mid-character.
    let verdict = l.rows.last().unwrap();
    assert!(verdict.label.lines.len() > 1);
    assert!(
        verdict
            .label
            .lines
            .iter()
            .all(|line| cells(line) as f64 * CELL <= l.width)
    );
}

#[test]
fn the_svg_marks_the_witness_exchanges_and_nothing_else() {
    let d = busy();
    let svg = d.to_svg();
    let witnesses = svg.matches("data-witness=\"true\"").count();
    let marked = d
        .items
        .iter()
        .filter(|i| i.witness && !i.is_verdict())
        .count();
    assert!(marked > 0);
    assert_eq!(witnesses, marked);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"seq has-witness\""));
    assert!(svg.ends_with("</svg>"));
    assert_eq!(svg.matches("class=\"lifeline\"").count(), 5);
    // Nothing outside the drawing is fetched or run.
    for banned in ["<script", "href=", "url(", "@import"] {
        assert!(!svg.contains(banned), "{banned}");
    }
}

#[test]
fn text_is_escaped_for_xml() {
    let mut d = Diagram::default();
    let a = d.participant("C", "client <1>");
    let b = d.participant("P", "platform");
    let arrow = Arrow::Call;
    d.items.push(Item {
        exchange: Some("e\"1".into()),
        ..Item::new(
            Shape::Message {
                from: a,
                to: b,
                arrow,
            },
            "POST /x?a=1&b=\"2\" <script>",
        )
    });
    let svg = d.to_svg();
    assert!(!svg.contains("<script>"));
    assert!(svg.contains("&lt;script&gt;"));
    assert!(svg.contains("a=1&amp;b=&quot;2&quot;"));
    assert!(svg.contains("data-exchange=\"e&quot;1\""));
    assert!(svg.contains("client &lt;1&gt;"));
}

#[test]
fn elision_and_wrapping_count_wide_characters_twice() {
    assert_eq!(cells("同一商户"), 8);
    let (cut, elided) = elide("同一商户订单号", 7);
    assert!(elided);
    assert_eq!(cut, "同一商…");
    let (lines, cut) = wrap("aaa bbb ccc", 7, 5);
    assert_eq!(lines, vec!["aaa bbb", "ccc"]);
    assert!(!cut);
    let (lines, cut) = wrap("abcdefghij", 4, 2);
    assert!(cut);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| cells(l) <= 4), "{lines:?}");
}

#[test]
fn an_empty_diagram_is_still_a_drawing() {
    let d = Diagram::default();
    let svg = d.to_svg();
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    let mut d = Diagram::default();
    d.push_verdict("nothing happened");
    assert_eq!(d.participants.len(), 1);
    assert!(d.to_svg().contains("nothing happened"));
}

impl Rect {
    /// Whether `o` lies wholly inside this box.
    fn contains(&self, o: &Rect) -> bool {
        o.x >= self.x
            && o.y >= self.y
            && o.x + o.w <= self.x + self.w
            && o.y + o.h <= self.y + self.h
    }

    /// Whether the two boxes share any area.
    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}
