//! Enums whose variants each have a name: the name is written beside its variant, not in
//! a second list that must be kept in step.

/// Defines the enum, its name function, `from_name` and `ALL`: `named! { fn as_str; pub enum Status {
/// Known = "known", } }` is the enum `Status` with `Status::as_str` answering `"known"`
/// and `Status::ALL` every variant in declaration order. The enum's and each variant's
/// attributes (docs, derives, serde) are kept as written. `fn as_str, Display;` also
/// displays each variant as its name.
#[macro_export]
macro_rules! named {
    (
        fn $name:ident $(, $display:ident)?;
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )* }
    ) => {
        $(#[$meta])*
        $vis enum $enum { $( $(#[$vmeta])* $variant, )* }

        impl $enum {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),*];

            /// The name written beside the variant.
            pub const fn $name(self) -> &'static str {
                match self { $($enum::$variant => $text,)* }
            }

            /// The variant of that name.
            pub fn from_name(name: &str) -> Option<$enum> {
                Self::ALL.iter().copied().find(|v| v.$name() == name)
            }
        }

        $(impl ::std::fmt::$display for $enum {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.$name())
            }
        })?
    };
}
