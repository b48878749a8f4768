//! A seeded generator of synthetic schema-guided dialogues: the stand-in for the
//! Schema-Guided Dialogue dataset (SGD; Rastogi et al., 2020, CC BY-SA 4.0) of the paper's
//! dialogue evaluation (Appendix C, E.4). No SGD text is used: the services, schemas,
//! templates and dialogues are written here and drawn from a seed, and the bank is frozen as
//! `data/banks/dialogue-synthetic.jsonl` with `data/banks/dialogue-provenance.json`.
//!
//! What it follows (C.1): "The 96 test prefixes contain four, six or eight user turns (32
//! each), cover ten services (at most twelve dialogues per service), and have one to three
//! categorical slots plus active intent. A service persists throughout each prefix; selection
//! requires state changes and a nonempty categorical value. Twelve development prefixes are
//! disjoint by split, identifier and content." "Initial intent is NONE, absent slots UNSET and
//! explicit indifference DONTCARE." C.2: "Field order uses seed 20261009." "Perturbation
//! schedule. Twelve test dialogues receive one task-preserving paraphrase; six of these also
//! receive one permutation of displayed semantic values."
//!
//! * **Services.** Ten services modelled on SGD domains ([`service_catalogue`]): two or three
//!   intents and three or four categorical slots of two to five values each, every intent and
//!   value with a stable id (`intent:FindRestaurants`, `price_range:very_expensive`) and a
//!   one-sentence description. A dialogue keeps one service throughout and one to three of its
//!   slots (in schema order, drawn from the seed); its `service` holds only those slots, so its
//!   fields are `active_intent` plus those slots. The slot counts are fixed per length so that
//!   the test bank has C.2's "96 dialogues, 576 user turns and 1,716 field turns": 64, 62 and
//!   64 slots over the 32 dialogues of four, six and eight turns.
//! * **Dynamics.** Each user turn is one act, drawn by weight among those the current state
//!   allows, after a SYSTEM utterance (empty before the first user turn); its gold state
//!   follows E.4's instruction, "Preserve earlier user-provided slot values unless the user
//!   changes or cancels them. Ignore SYSTEM suggestions unless accepted by the user. UNSET
//!   means no value is held; DONTCARE means the user explicitly has no preference. Select the
//!   current active intent, or NONE if no intent is active." (`gold_after`): the
//!   user greets (no change), states an intent, informs a slot value (possibly answering a
//!   SYSTEM request), changes a held value, cancels a value (→ UNSET), says it has no
//!   preference (→ DONTCARE), accepts a SYSTEM suggestion (→ the suggested value), rejects or
//!   ignores one (→ unchanged; ignoring is deferring or acting on another field), confirms a
//!   SYSTEM confirmation or chats (no change), switches to another intent of the service
//!   (slots kept), or makes two changes on two fields in one turn. The initial state is intent
//!   NONE and every slot UNSET; while no intent is active the user states one. A draw is kept
//!   only if the state changes after the first turn and some turn holds a slot value other
//!   than UNSET and DONTCARE ("selection requires state changes and a nonempty categorical
//!   value"), and if its user-utterance sequence is new to the bank (so development prefixes
//!   are disjoint from test ones by content); otherwise it is redrawn from the same stream.
//! * **Texts.** Natural English from templates with two to four paraphrase alternatives per
//!   act; values appear verbatim as the schema spells them. `origin` records the generator
//!   version, the seed, the draw and, per turn, the act and template ids (`inform#2`).
//! * **Field order.** Every dialogue's `field_order` is its fields (`active_intent`, then its
//!   slots in schema order) shuffled by ONE `ChaCha8Rng` seeded with [`FIELD_ORDER_SEED`]
//!   (20261009), one shuffle per dialogue in bank order — the 96 test dialogues, then the 12
//!   development ones — so it is fixed before any outcome ("The field order is fixed before
//!   outcomes", E.4). A perturbed copy keeps its base's order and draws none.
//! * **Perturbations.** Four test dialogues per length (12) drawn from the seed receive a
//!   `Paraphrase` copy: every user utterance is re-rendered with another alternative of each
//!   of its templates (system utterances, schema and gold states unchanged). Two of those four
//!   per length (6) also receive a `ValuePermutation` copy: the original texts, with the
//!   intents and each slot's values shown in a seeded order that differs from the original
//!   for every field (gold states unchanged).
//! * **Bank order** (the JSONL's lines): the 96 test dialogues (by length 4, 6, 8, 32 each),
//!   then the perturbed copies (by base in bank order, the paraphrase before the value
//!   permutation), then the 12 development dialogues (4 per length). Ids:
//!   `sgdsyn:<split>:<service>:<nnn>` numbered per split and service in bank order, a copy
//!   adding `:paraphrase` or `:value_permutation`.
//!
//! The seed is [`DEFAULT_DIALOGUE_SEED`] (the paper gives none for the bank: SGD is a fixed
//! dataset); the random streams of the seed are fixed per purpose (layout, each dialogue,
//! perturbation choice, each paraphrase and permutation), so changing one dialogue's draws
//! changes no other dialogue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use c2s_records::{
    CategoricalSlot, Dialogue, DialogueError, DialogueService, DialogueSplit, DialogueState,
    DialogueTurn, Perturbation, SchemaValue, DONTCARE, FIELD_ORDER_SEED, INTENT_FIELD, NONE_INTENT,
    UNSET,
};

/// Version of the dialogue generator; bump when any output byte changes.
pub const DIALOGUE_GENERATOR_VERSION: &str = "choice2seq-dialogue-synthetic/1";
/// The bank seed (the paper states none for the dialogue bank).
pub const DEFAULT_DIALOGUE_SEED: u64 = 20_261_201;
/// The bank file under the bank directory.
pub const DIALOGUE_FILE: &str = "dialogue-synthetic.jsonl";
/// Its provenance file.
pub const DIALOGUE_PROVENANCE: &str = "dialogue-provenance.json";
/// The id prefix of every dialogue.
pub const DIALOGUE_ID_PREFIX: &str = "sgdsyn";
/// C.1: "four, six or eight user turns".
pub const DIALOGUE_LENGTHS: [usize; 3] = [4, 6, 8];
/// C.1: "(32 each)".
pub const TEST_PER_LENGTH: usize = 32;
/// C.1: "Twelve development prefixes", four per length here.
pub const DEV_PER_LENGTH: usize = 4;
/// C.1: "at most twelve dialogues per service".
pub const MAX_PER_SERVICE: usize = 12;
/// C.2: "Twelve test dialogues receive one task-preserving paraphrase".
pub const PARAPHRASED: usize = 12;
/// C.2: "six of these also receive one permutation of displayed semantic values".
pub const PERMUTED: usize = 6;
/// Slots per test dialogue, per length: how many of the 32 dialogues have 1, 2, 3 slots.
/// Totals 64, 62, 64 slots, so 4·64 + 6·62 + 8·64 = 1,140 slot turns plus 576 intent turns
/// make C.2's 1,716 field turns.
pub const TEST_SLOT_COUNTS: [[usize; 3]; 3] = [[8, 16, 8], [10, 14, 8], [8, 16, 8]];
/// Slots of the four development dialogues of each length.
pub const DEV_SLOT_COUNTS: [usize; 4] = [1, 2, 2, 3];

/// What the provenance says the bank is.
pub const DIALOGUE_STATEMENT: &str = "synthetic stand-in for the Schema-Guided Dialogue dataset (Rastogi et al., 2020, CC BY-SA 4.0), not SGD: no SGD text is used. Services, schemas, templates and dialogues are written and drawn by banks/src/dialogue.rs; the service and intent names are modelled on SGD's domains.";
/// What was found when looking for a shipped copy of SGD (no network at run time or in CI).
pub const DIALOGUE_SOURCE_CHECK: &str = "PyPI was checked for a package shipping the SGD data itself: sgd-dstc8-data-model 0.2.0 (wheel: dataclasses for the DSTC8 format, no data), convlab 3.0.1 (sdist: SGD model configs and descriptions only; its unified datasets are downloaded at run time), no distribution named dstc8 or schema-guided-dialogue, and nothing else in the PyPI name list matching dstc/schema-guided dialogue; no reachable package ships the dialogues, so this bank is generated.";

// Random streams of the bank seed.
const STREAM_LAYOUT: u64 = 1;
const STREAM_PERTURBATION_CHOICE: u64 = 2;
const STREAM_TEST: u64 = 100;
const STREAM_DEV: u64 = 1_000;
const STREAM_PARAPHRASE: u64 = 3_000;
const STREAM_PERMUTATION: u64 = 4_000;
/// Draws of one dialogue before giving up (the rules hold for almost every draw).
const MAX_ATTEMPTS: usize = 1_000;

/// Why the bank could not be built, written or read.
#[derive(Debug, thiserror::Error)]
pub enum DialogueBankError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Invalid(#[from] DialogueError),
    #[error("{0}")]
    Build(String),
}
// ---------------------------------------------------------------------------------------------
// The service catalogue
// ---------------------------------------------------------------------------------------------

/// An intent of the catalogue: its name (the exact semantic value), description, and the
/// user requests that state it (the paraphrase alternatives of the `intent` act).
struct IntentSpec {
    name: &'static str,
    description: &'static str,
    requests: &'static [&'static str],
}

/// A categorical slot of the catalogue: its name, the noun phrase the templates use for it,
/// its description and its values with their descriptions, in schema order.
struct SlotSpec {
    name: &'static str,
    noun: &'static str,
    description: &'static str,
    values: &'static [(&'static str, &'static str)],
}

/// A service of the catalogue, modelled on one SGD domain.
struct ServiceSpec {
    name: &'static str,
    description: &'static str,
    intents: &'static [IntentSpec],
    slots: &'static [SlotSpec],
}

const TICKETS: SlotSpec = SlotSpec {
    name: "number_of_tickets",
    noun: "number of tickets",
    description: "How many tickets to buy.",
    values: &[
        ("1", "One ticket."),
        ("2", "Two tickets."),
        ("3", "Three tickets."),
        ("4", "Four tickets."),
    ],
};

const SERVICES: [ServiceSpec; 10] = [
    ServiceSpec {
        name: "Restaurants",
        description: "Find restaurants and reserve a table.",
        intents: &[
            IntentSpec {
                name: "FindRestaurants",
                description: "Search for a restaurant that matches the user's preferences.",
                requests: &[
                    "I'm looking for a place to eat.",
                    "Can you help me find a restaurant?",
                    "I want to find somewhere nice to have dinner.",
                ],
            },
            IntentSpec {
                name: "ReserveRestaurant",
                description: "Reserve a table at a restaurant.",
                requests: &[
                    "I'd like to reserve a table.",
                    "Can you book a table for me?",
                    "Please make a restaurant reservation for me.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "price_range",
                noun: "price range",
                description: "The price level of the restaurant.",
                values: &[
                    ("inexpensive", "Low prices, suited to a tight budget."),
                    ("moderate", "Mid-range prices."),
                    ("expensive", "High prices."),
                    ("very expensive", "The highest prices, fine dining."),
                ],
            },
            SlotSpec {
                name: "cuisine",
                noun: "cuisine",
                description: "The kind of food the restaurant serves.",
                values: &[
                    ("Italian", "Italian food such as pasta and pizza."),
                    ("Mexican", "Mexican food such as tacos and enchiladas."),
                    ("Indian", "Indian food such as curries and tandoori dishes."),
                    ("Chinese", "Chinese food such as dumplings and noodles."),
                    ("Vegetarian", "Meat-free dishes."),
                ],
            },
            SlotSpec {
                name: "seating",
                noun: "seating",
                description: "Where the party would like to sit.",
                values: &[
                    ("indoor", "A table inside the restaurant."),
                    ("outdoor", "A table outside, on a terrace or patio."),
                ],
            },
            SlotSpec {
                name: "party_size",
                noun: "party size",
                description: "The number of people in the reservation.",
                values: &[
                    ("2", "A table for two people."),
                    ("3", "A table for three people."),
                    ("4", "A table for four people."),
                    ("6", "A table for six people."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Hotels",
        description: "Search for hotels and reserve rooms.",
        intents: &[
            IntentSpec {
                name: "SearchHotel",
                description: "Search for a hotel that matches the user's preferences.",
                requests: &[
                    "I need to find a hotel.",
                    "Can you look for a place to stay?",
                    "I'm searching for a hotel for my trip.",
                ],
            },
            IntentSpec {
                name: "ReserveHotel",
                description: "Reserve rooms at a hotel.",
                requests: &[
                    "I'd like to book a hotel room.",
                    "Please reserve a room for me.",
                    "Can you make a hotel reservation?",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "star_rating",
                noun: "star rating",
                description: "The hotel's star rating.",
                values: &[
                    ("2", "A two-star hotel."),
                    ("3", "A three-star hotel."),
                    ("4", "A four-star hotel."),
                    ("5", "A five-star hotel."),
                ],
            },
            SlotSpec {
                name: "number_of_rooms",
                noun: "number of rooms",
                description: "How many rooms to reserve.",
                values: &[
                    ("1", "One room."),
                    ("2", "Two rooms."),
                    ("3", "Three rooms."),
                ],
            },
            SlotSpec {
                name: "area",
                noun: "area",
                description: "The part of town where the hotel is.",
                values: &[
                    ("downtown", "In the city centre."),
                    ("airport", "Close to the airport."),
                    ("beachfront", "On the beach."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Flights",
        description: "Find and book flights.",
        intents: &[
            IntentSpec {
                name: "SearchOnewayFlight",
                description: "Search for a one-way flight.",
                requests: &[
                    "I need a one-way flight.",
                    "Can you find me a one-way flight?",
                    "I'm looking for a flight, just one way.",
                ],
            },
            IntentSpec {
                name: "SearchRoundtripFlights",
                description: "Search for round trip flights.",
                requests: &[
                    "I'm looking for a round trip flight.",
                    "Can you find me round trip flights?",
                    "I need a flight there and back.",
                ],
            },
            IntentSpec {
                name: "ReserveOnewayFlight",
                description: "Book a one-way flight.",
                requests: &[
                    "I'd like to book a one-way flight.",
                    "Please reserve a one-way flight for me.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "seating_class",
                noun: "seating class",
                description: "The cabin class of the ticket.",
                values: &[
                    ("Economy", "The standard cabin."),
                    ("Premium Economy", "The standard cabin with extra legroom."),
                    ("Business", "The business cabin."),
                    ("First Class", "The first-class cabin."),
                ],
            },
            SlotSpec {
                name: "airlines",
                noun: "airline",
                description: "The airline operating the flight.",
                values: &[
                    ("United Airlines", "Flights operated by United Airlines."),
                    (
                        "American Airlines",
                        "Flights operated by American Airlines.",
                    ),
                    ("Delta Airlines", "Flights operated by Delta Airlines."),
                    (
                        "Southwest Airlines",
                        "Flights operated by Southwest Airlines.",
                    ),
                    ("Alaska Airlines", "Flights operated by Alaska Airlines."),
                ],
            },
            TICKETS,
            SlotSpec {
                name: "stops",
                noun: "number of stops",
                description: "How many stops the flight makes.",
                values: &[
                    ("nonstop", "A direct flight without stops."),
                    ("one stop", "A flight with one connection."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "RentalCars",
        description: "Find and reserve rental cars.",
        intents: &[
            IntentSpec {
                name: "GetCarsAvailable",
                description: "Find rental cars available for the user's dates.",
                requests: &[
                    "I need to rent a car.",
                    "Can you find me a rental car?",
                    "What rental cars are available?",
                ],
            },
            IntentSpec {
                name: "ReserveCar",
                description: "Reserve a rental car.",
                requests: &[
                    "I'd like to reserve a rental car.",
                    "Please book a car for me.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "car_type",
                noun: "car type",
                description: "The size or style of the car.",
                values: &[
                    ("Compact", "A small car."),
                    ("Standard", "A mid-size car."),
                    ("Full-size", "A large car."),
                    ("SUV", "A sport utility vehicle."),
                ],
            },
            SlotSpec {
                name: "transmission",
                noun: "transmission",
                description: "The car's gearbox.",
                values: &[
                    ("automatic", "An automatic gearbox."),
                    ("manual", "A manual gearbox."),
                ],
            },
            SlotSpec {
                name: "fuel_type",
                noun: "fuel type",
                description: "What powers the car.",
                values: &[
                    ("gasoline", "A petrol engine."),
                    ("hybrid", "A hybrid engine."),
                    ("electric", "A battery electric car."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Events",
        description: "Find cultural events and buy tickets.",
        intents: &[
            IntentSpec {
                name: "FindEvents",
                description: "Search for an event to attend.",
                requests: &[
                    "I'm looking for something fun to do.",
                    "Can you find me an event to go to?",
                    "Are there any events happening soon?",
                ],
            },
            IntentSpec {
                name: "BuyEventTickets",
                description: "Buy tickets for an event.",
                requests: &[
                    "I'd like to buy tickets for an event.",
                    "Please get me tickets for the event.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "event_type",
                noun: "event type",
                description: "The kind of event.",
                values: &[
                    ("Music", "Concerts and other live music."),
                    ("Sports", "Sports games and matches."),
                    ("Theater", "Plays and musicals."),
                ],
            },
            TICKETS,
            SlotSpec {
                name: "seating_area",
                noun: "seating area",
                description: "Where in the venue the seats are.",
                values: &[
                    ("floor", "Seats or standing room on the floor."),
                    ("balcony", "Seats on the balcony."),
                    ("box", "Seats in a private box."),
                ],
            },
            SlotSpec {
                name: "time_of_day",
                noun: "time of day",
                description: "When the event takes place.",
                values: &[
                    ("afternoon", "An afternoon event."),
                    ("evening", "An evening event."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Movies",
        description: "Find movies, showtimes and tickets.",
        intents: &[
            IntentSpec {
                name: "FindMovies",
                description: "Search for movies playing nearby.",
                requests: &[
                    "I want to find a movie to watch.",
                    "Can you suggest some movies playing nearby?",
                    "I'm looking for a movie.",
                ],
            },
            IntentSpec {
                name: "GetTimesForMovie",
                description: "Get the showtimes of a movie.",
                requests: &[
                    "What are the showtimes?",
                    "Can you check when the movie is showing?",
                ],
            },
            IntentSpec {
                name: "BuyMovieTickets",
                description: "Buy tickets for a movie showing.",
                requests: &[
                    "I'd like to buy movie tickets.",
                    "Please get me tickets for the movie.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "genre",
                noun: "genre",
                description: "The genre of the movie.",
                values: &[
                    ("action", "Action movies."),
                    ("comedy", "Comedies."),
                    ("drama", "Dramas."),
                    ("horror", "Horror movies."),
                    ("animation", "Animated movies."),
                ],
            },
            SlotSpec {
                name: "show_type",
                noun: "show type",
                description: "The format of the screening.",
                values: &[
                    ("regular", "A regular screening."),
                    ("3d", "A 3D screening."),
                    ("imax", "An IMAX screening."),
                ],
            },
            TICKETS,
        ],
    },
    ServiceSpec {
        name: "Music",
        description: "Find and play songs.",
        intents: &[
            IntentSpec {
                name: "LookupSong",
                description: "Search for a song.",
                requests: &[
                    "I want to find a song.",
                    "Can you look up some songs for me?",
                    "Help me find some music.",
                ],
            },
            IntentSpec {
                name: "PlaySong",
                description: "Play a song on a device.",
                requests: &[
                    "Please play a song.",
                    "Can you play some music for me?",
                    "I'd like to play a song now.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "genre",
                noun: "genre",
                description: "The genre of the song.",
                values: &[
                    ("pop", "Pop music."),
                    ("rock", "Rock music."),
                    ("jazz", "Jazz."),
                    ("country", "Country music."),
                    ("classical", "Classical music."),
                ],
            },
            SlotSpec {
                name: "playback_device",
                noun: "playback device",
                description: "The device that plays the song.",
                values: &[
                    ("TV", "The television."),
                    ("kitchen speaker", "The speaker in the kitchen."),
                    ("bedroom speaker", "The speaker in the bedroom."),
                ],
            },
            SlotSpec {
                name: "year",
                noun: "release year",
                description: "The year the song came out.",
                values: &[
                    ("2016", "Released in 2016."),
                    ("2017", "Released in 2017."),
                    ("2018", "Released in 2018."),
                    ("2019", "Released in 2019."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Buses",
        description: "Find and buy bus tickets.",
        intents: &[
            IntentSpec {
                name: "FindBus",
                description: "Search for a bus journey.",
                requests: &[
                    "I need to find a bus.",
                    "Can you look for a bus for my trip?",
                    "Are there any buses I can take?",
                ],
            },
            IntentSpec {
                name: "BuyBusTicket",
                description: "Buy tickets for a bus journey.",
                requests: &[
                    "I'd like to buy a bus ticket.",
                    "Please book the bus for me.",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "fare_type",
                noun: "fare type",
                description: "The ticket's fare class.",
                values: &[
                    ("Economy", "The cheapest fare."),
                    ("Economy extra", "An economy fare with extra legroom."),
                    ("Flexible", "A fare that can be changed or refunded."),
                ],
            },
            SlotSpec {
                name: "group_size",
                noun: "group size",
                description: "How many people are travelling.",
                values: &[
                    ("1", "One traveller."),
                    ("2", "Two travellers."),
                    ("3", "Three travellers."),
                    ("4", "Four travellers."),
                ],
            },
            SlotSpec {
                name: "category",
                noun: "route type",
                description: "Whether the bus goes directly or stops on the way.",
                values: &[
                    ("direct", "A bus without intermediate stops."),
                    ("one-stop", "A bus with one stop on the way."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Homes",
        description: "Find homes to rent or buy and schedule visits.",
        intents: &[
            IntentSpec {
                name: "FindHomeByArea",
                description: "Search for a home in an area.",
                requests: &[
                    "I'm looking for a place to live.",
                    "Can you help me find an apartment?",
                    "I want to find a new home.",
                ],
            },
            IntentSpec {
                name: "ScheduleVisit",
                description: "Schedule a visit to a property.",
                requests: &[
                    "I'd like to schedule a visit.",
                    "Can I arrange a viewing of the property?",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "listing_type",
                noun: "listing type",
                description: "Whether the user wants to rent or buy.",
                values: &[("rent", "A home to rent."), ("buy", "A home to buy.")],
            },
            SlotSpec {
                name: "number_of_beds",
                noun: "number of bedrooms",
                description: "How many bedrooms the home has.",
                values: &[
                    ("1", "One bedroom."),
                    ("2", "Two bedrooms."),
                    ("3", "Three bedrooms."),
                    ("4", "Four bedrooms."),
                ],
            },
            SlotSpec {
                name: "number_of_baths",
                noun: "number of bathrooms",
                description: "How many bathrooms the home has.",
                values: &[
                    ("1", "One bathroom."),
                    ("2", "Two bathrooms."),
                    ("3", "Three bathrooms."),
                ],
            },
            SlotSpec {
                name: "furnishing",
                noun: "furnishing",
                description: "Whether the home comes with furniture.",
                values: &[
                    ("furnished", "The home comes with furniture."),
                    ("unfurnished", "The home comes without furniture."),
                ],
            },
        ],
    },
    ServiceSpec {
        name: "Travel",
        description: "Find attractions to visit and book tours.",
        intents: &[
            IntentSpec {
                name: "FindAttractions",
                description: "Search for attractions to visit.",
                requests: &[
                    "I'm looking for attractions to visit.",
                    "What are some places worth seeing?",
                    "Can you suggest something to visit?",
                ],
            },
            IntentSpec {
                name: "BookTour",
                description: "Book a guided tour of an attraction.",
                requests: &[
                    "I'd like to book a guided tour.",
                    "Can you reserve a tour for me?",
                ],
            },
        ],
        slots: &[
            SlotSpec {
                name: "category",
                noun: "attraction type",
                description: "The kind of attraction.",
                values: &[
                    ("Museum", "Museums and galleries."),
                    ("Park", "Parks and gardens."),
                    ("Historical Landmark", "Historic buildings and monuments."),
                    ("Tourist Attraction", "Popular sights for visitors."),
                    ("Nature Preserve", "Protected natural areas."),
                ],
            },
            SlotSpec {
                name: "entry_fee",
                noun: "entry fee",
                description: "Whether the attraction charges for entry.",
                values: &[
                    ("free", "No entry fee."),
                    ("paid", "An entry fee is charged."),
                ],
            },
            SlotSpec {
                name: "group_type",
                noun: "group type",
                description: "Who the visit is for.",
                values: &[
                    ("families", "Suited to families with children."),
                    ("couples", "Suited to couples."),
                    ("solo travelers", "Suited to people travelling alone."),
                ],
            },
        ],
    },
];

// ---------------------------------------------------------------------------------------------
// Templates: `{noun}` is the slot's noun phrase, `{v}` the value, `{old}` the value held
// before. No template starts with a placeholder, so lowercasing the first letter of a second
// clause never touches a value.
// ---------------------------------------------------------------------------------------------

const T_GREETING: &[&str] = &[
    "Hi, I need some help.",
    "Hello, can you help me with something?",
    "Hi there, I have a request.",
];
const T_INFORM: &[&str] = &[
    "I'd like {v} for the {noun}.",
    "For the {noun}, {v} would be great.",
    "Let's go with {v} for the {noun}.",
    "Please make the {noun} {v}.",
];
const T_CHANGE: &[&str] = &[
    "Change the {noun} to {v} instead.",
    "I'd prefer {v} for the {noun} instead of {old}.",
    "Make that {v} for the {noun}, not {old}.",
];
const T_CANCEL: &[&str] = &[
    "Please drop the {noun} I gave you; I'll decide on it later.",
    "Forget the {noun} for now, I haven't decided on it.",
    "Remove the {noun} I mentioned; I'll choose it later.",
];
const T_DONTCARE: &[&str] = &[
    "I don't have a preference for the {noun}.",
    "Any {noun} is fine with me.",
    "The {noun} doesn't matter to me.",
];
const T_ACCEPT: &[&str] = &[
    "Yes, {v} works for me.",
    "Sure, let's do that.",
    "That sounds good, let's go with {v}.",
];
const T_REJECT: &[&str] = &[
    "No, I don't want {v}.",
    "No thanks, not that.",
    "I'd rather not, thanks.",
];
/// Ignoring a suggestion without acting on it: no acceptance, no value.
const T_DEFER: &[&str] = &[
    "Hmm, let me think about that for a moment.",
    "I'm not sure yet, give me a minute.",
    "Let me check with my friend first.",
];
const T_CHITCHAT: &[&str] = &["Okay, thanks.", "Great, thank you.", "Thanks, that helps."];
const T_CONFIRM_YES: &[&str] = &["Yes, that's right.", "Correct, thank you.", "Yes, exactly."];
/// Put before an intent request when the user switches intent (alternative i uses prefix
/// i mod 3 and request i).
const T_SWITCH_PREFIX: &[&str] = &["That looks good. ", "Perfect. ", "Okay, great. "];
/// Joins the two clauses of a two-change turn.
const T_CONNECTOR: &[&str] = &["Also,", "And", "Oh, and"];

const S_OPEN: &[&str] = &[
    "Hello! What can I do for you?",
    "Hi, how can I help you today?",
];
const S_GENERIC: &[&str] = &[
    "Sure, I can help with that.",
    "Okay, noted. Is there anything else?",
    "Got it. What else would you like?",
    "Let me check what is available.",
];
const S_REQUEST: &[&str] = &[
    "Do you have a preference for the {noun}?",
    "What {noun} would you like?",
    "Any preference on the {noun}?",
];
const S_SUGGEST: &[&str] = &[
    "How about {v} for the {noun}?",
    "Would {v} work for the {noun}?",
    "I can suggest {v} for the {noun}. Would you like that?",
];
const S_CONFIRM: &[&str] = &[
    "Just to confirm, you want {v} for the {noun}?",
    "So that's {v} for the {noun}, right?",
];

fn fill(template: &str, noun: &str, v: &str, old: &str) -> String {
    template
        .replace("{noun}", noun)
        .replace("{v}", v)
        .replace("{old}", old)
}

/// Lowercase the first letter of a clause that follows a connector, except the pronoun I.
fn lower_first(s: &str) -> String {
    if s.starts_with("I ") || s.starts_with("I'") {
        return s.to_string();
    }
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A stable id part: lowercase ASCII alphanumerics, everything else `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

fn intent_value(i: &IntentSpec) -> SchemaValue {
    SchemaValue {
        id: format!("intent:{}", i.name),
        value: i.name.to_string(),
        description: i.description.to_string(),
    }
}

fn slot_schema(s: &SlotSpec) -> CategoricalSlot {
    CategoricalSlot {
        name: s.name.to_string(),
        description: s.description.to_string(),
        values: s
            .values
            .iter()
            .map(|(v, d)| SchemaValue {
                id: format!("{}:{}", s.name, slug(v)),
                value: v.to_string(),
                description: d.to_string(),
            })
            .collect(),
    }
}

/// The schema of catalogue service `spec` restricted to the slots `slots` (catalogue indices
/// in schema order).
fn service_schema(spec: &ServiceSpec, slots: &[usize]) -> DialogueService {
    DialogueService {
        name: spec.name.to_string(),
        description: spec.description.to_string(),
        intents: spec.intents.iter().map(intent_value).collect(),
        slots: slots.iter().map(|&i| slot_schema(&spec.slots[i])).collect(),
    }
}

/// The ten services with every slot, in catalogue order.
pub fn service_catalogue() -> Vec<DialogueService> {
    SERVICES
        .iter()
        .map(|s| service_schema(s, &(0..s.slots.len()).collect::<Vec<_>>()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Acts and the gold-state rules
// ---------------------------------------------------------------------------------------------

/// A dialogue's service and slots: `slots[k]` is the dialogue's k-th slot.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    spec: &'a ServiceSpec,
    slots: &'a [&'a SlotSpec],
}

impl Ctx<'_> {
    fn value(&self, slot: usize, value: usize) -> &'static str {
        self.slots[slot].values[value].0
    }
    fn value_index(&self, slot: usize, value: &str) -> Option<usize> {
        self.slots[slot]
            .values
            .iter()
            .position(|(v, _)| *v == value)
    }
    fn held<'s>(&self, state: &'s DialogueState, slot: usize) -> &'s str {
        state
            .get(self.slots[slot].name)
            .map(String::as_str)
            .unwrap_or(UNSET)
    }
    fn initial_state(&self) -> DialogueState {
        let mut s = DialogueState::new();
        s.insert(INTENT_FIELD.to_string(), NONE_INTENT.to_string());
        for slot in self.slots {
            s.insert(slot.name.to_string(), UNSET.to_string());
        }
        s
    }
}

/// One change a user makes to one field.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Act {
    /// States intent `intent` (`switch`: while another intent is active).
    Intent { intent: usize, switch: bool },
    /// Gives a value for a slot that holds none (UNSET) or DONTCARE.
    Inform { slot: usize, value: usize },
    /// Replaces the value a slot holds.
    Change { slot: usize, value: usize },
    /// Withdraws the slot's value or indifference: UNSET.
    Cancel { slot: usize },
    /// "DONTCARE means the user explicitly has no preference."
    DontCare { slot: usize },
}

impl Act {
    fn field<'a>(&self, ctx: &Ctx<'a>) -> &'a str {
        match self {
            Act::Intent { .. } => INTENT_FIELD,
            Act::Inform { slot, .. }
            | Act::Change { slot, .. }
            | Act::Cancel { slot }
            | Act::DontCare { slot } => ctx.slots[*slot].name,
        }
    }
}

/// What the SYSTEM says before a user turn.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SystemAct {
    /// Before the first user turn: the empty utterance.
    Opening,
    /// A generic acknowledgement.
    Generic,
    /// Asks for a slot's value.
    Request { slot: usize },
    /// Suggests a value: it holds only if the user accepts it.
    Suggest { slot: usize, value: usize },
    /// Repeats a held value.
    Confirm { slot: usize },
}

/// What the USER does in a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UserAct {
    Greeting,
    /// One change, or two on two fields.
    Acts(Vec<Act>),
    /// Accepts the SYSTEM suggestion.
    Accept,
    /// Rejects the SYSTEM suggestion.
    Reject,
    /// Neither accepts nor rejects the suggestion, and changes nothing.
    Defer,
    ChitChat,
    /// Confirms the SYSTEM confirmation.
    ConfirmYes,
}

/// The act name recorded in `origin` and counted in the provenance.
fn kind(system: &SystemAct, user: &UserAct) -> &'static str {
    match (system, user) {
        (_, UserAct::Greeting) => "greeting",
        (SystemAct::Suggest { .. }, UserAct::Accept) => "suggest_accept",
        (SystemAct::Suggest { .. }, UserAct::Reject) => "suggest_reject",
        (SystemAct::Suggest { .. }, UserAct::Defer | UserAct::Acts(_)) => "suggest_ignore",
        (_, UserAct::ConfirmYes) => "confirm",
        (_, UserAct::ChitChat | UserAct::Defer | UserAct::Accept | UserAct::Reject) => "chitchat",
        (_, UserAct::Acts(acts)) if acts.len() > 1 => "double",
        (_, UserAct::Acts(acts)) => match acts.first() {
            Some(Act::Intent { switch: false, .. }) => "intent",
            Some(Act::Intent { switch: true, .. }) => "switch_intent",
            Some(Act::Inform { .. }) => "inform",
            Some(Act::Change { .. }) => "change",
            Some(Act::Cancel { .. }) => "cancel",
            Some(Act::DontCare { .. }) | None => "dontcare",
        },
    }
}

/// The gold state after a user turn, by E.4's instruction: "Preserve earlier user-provided
/// slot values unless the user changes or cancels them. Ignore SYSTEM suggestions unless
/// accepted by the user. UNSET means no value is held; DONTCARE means the user explicitly has
/// no preference. Select the current active intent, or NONE if no intent is active."
fn gold_after(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    user: &UserAct,
) -> DialogueState {
    let mut state = prior.clone();
    let mut set = |field: &str, value: &str| {
        state.insert(field.to_string(), value.to_string());
    };
    match user {
        UserAct::Acts(acts) => {
            for act in acts {
                let field = act.field(ctx);
                match act {
                    Act::Intent { intent, .. } => set(field, ctx.spec.intents[*intent].name),
                    Act::Inform { slot, value } | Act::Change { slot, value } => {
                        set(field, ctx.value(*slot, *value))
                    }
                    Act::Cancel { .. } => set(field, UNSET),
                    Act::DontCare { .. } => set(field, DONTCARE),
                }
            }
        }
        // Accepted: the suggestion becomes the user's value.
        UserAct::Accept => {
            if let SystemAct::Suggest { slot, value } = system {
                set(ctx.slots[*slot].name, ctx.value(*slot, *value));
            }
        }
        // Rejected, deferred or never about a value: everything is preserved.
        UserAct::Greeting
        | UserAct::Reject
        | UserAct::Defer
        | UserAct::ChitChat
        | UserAct::ConfirmYes => {}
    }
    state
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// One templated clause of a user utterance: its template key, its paraphrase alternatives
/// (already filled) and the one chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    key: String,
    alts: Vec<String>,
    idx: usize,
}

impl Piece {
    fn new(key: impl Into<String>, alts: Vec<String>, rng: &mut ChaCha8Rng) -> Piece {
        let idx = rng.random_range(0..alts.len());
        Piece {
            key: key.into(),
            alts,
            idx,
        }
    }
    fn text(&self) -> &str {
        &self.alts[self.idx]
    }
    fn id(&self) -> String {
        format!("{}#{}", self.key, self.idx)
    }
}

const CONNECTOR_KEY: &str = "connector";

fn fills(templates: &[&str], noun: &str, v: &str, old: &str) -> Vec<String> {
    templates.iter().map(|t| fill(t, noun, v, old)).collect()
}

fn act_piece(ctx: &Ctx, state: &DialogueState, act: &Act, rng: &mut ChaCha8Rng) -> Piece {
    match act {
        Act::Intent { intent, switch } => {
            let spec = &ctx.spec.intents[*intent];
            if *switch {
                let alts = spec
                    .requests
                    .iter()
                    .enumerate()
                    .map(|(i, r)| format!("{}{r}", T_SWITCH_PREFIX[i % T_SWITCH_PREFIX.len()]))
                    .collect();
                Piece::new(format!("switch.{}", spec.name), alts, rng)
            } else {
                let alts = spec.requests.iter().map(|r| r.to_string()).collect();
                Piece::new(format!("intent.{}", spec.name), alts, rng)
            }
        }
        Act::Inform { slot, value } => {
            let noun = ctx.slots[*slot].noun;
            Piece::new(
                "inform",
                fills(T_INFORM, noun, ctx.value(*slot, *value), ""),
                rng,
            )
        }
        Act::Change { slot, value } => {
            let noun = ctx.slots[*slot].noun;
            let old = ctx.held(state, *slot);
            Piece::new(
                "change",
                fills(T_CHANGE, noun, ctx.value(*slot, *value), old),
                rng,
            )
        }
        Act::Cancel { slot } => Piece::new(
            "cancel",
            fills(T_CANCEL, ctx.slots[*slot].noun, "", ""),
            rng,
        ),
        Act::DontCare { slot } => Piece::new(
            "dontcare",
            fills(T_DONTCARE, ctx.slots[*slot].noun, "", ""),
            rng,
        ),
    }
}

fn plain(templates: &[&str]) -> Vec<String> {
    templates.iter().map(|t| t.to_string()).collect()
}

/// The clauses of a user turn, rendered against the state before it.
fn user_pieces(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    user: &UserAct,
    rng: &mut ChaCha8Rng,
) -> Vec<Piece> {
    let suggested = match system {
        SystemAct::Suggest { slot, value } => (ctx.slots[*slot].noun, ctx.value(*slot, *value)),
        _ => ("", ""),
    };
    match user {
        UserAct::Greeting => vec![Piece::new("greeting", plain(T_GREETING), rng)],
        UserAct::Accept => vec![Piece::new(
            "accept",
            fills(T_ACCEPT, suggested.0, suggested.1, ""),
            rng,
        )],
        UserAct::Reject => vec![Piece::new(
            "reject",
            fills(T_REJECT, suggested.0, suggested.1, ""),
            rng,
        )],
        UserAct::Defer => vec![Piece::new("defer", plain(T_DEFER), rng)],
        UserAct::ChitChat => vec![Piece::new("chitchat", plain(T_CHITCHAT), rng)],
        UserAct::ConfirmYes => vec![Piece::new("confirm_yes", plain(T_CONFIRM_YES), rng)],
        UserAct::Acts(acts) => {
            let mut out = Vec::new();
            for (i, act) in acts.iter().enumerate() {
                if i > 0 {
                    out.push(Piece::new(CONNECTOR_KEY, plain(T_CONNECTOR), rng));
                }
                out.push(act_piece(ctx, prior, act, rng));
            }
            out
        }
    }
}

/// The user utterance of a turn's clauses: a clause after a connector starts lowercase.
fn compose(pieces: &[Piece]) -> String {
    let mut out = String::new();
    let mut after_connector = false;
    for p in pieces {
        if p.key == CONNECTOR_KEY {
            out.push(' ');
            out.push_str(p.text());
            out.push(' ');
            after_connector = true;
        } else if after_connector {
            out.push_str(&lower_first(p.text()));
            after_connector = false;
        } else {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(p.text());
        }
    }
    out
}

fn system_text(
    ctx: &Ctx,
    prior: &DialogueState,
    system: &SystemAct,
    rng: &mut ChaCha8Rng,
) -> String {
    let pick = |templates: &[&str], rng: &mut ChaCha8Rng| -> String {
        templates
            .choose(rng)
            .copied()
            .unwrap_or_default()
            .to_string()
    };
    match system {
        SystemAct::Opening => String::new(),
        SystemAct::Generic if prior[INTENT_FIELD] == NONE_INTENT => pick(S_OPEN, rng),
        SystemAct::Generic => pick(S_GENERIC, rng),
        SystemAct::Request { slot } => fill(&pick(S_REQUEST, rng), ctx.slots[*slot].noun, "", ""),
        SystemAct::Suggest { slot, value } => fill(
            &pick(S_SUGGEST, rng),
            ctx.slots[*slot].noun,
            ctx.value(*slot, *value),
            "",
        ),
        SystemAct::Confirm { slot } => fill(
            &pick(S_CONFIRM, rng),
            ctx.slots[*slot].noun,
            ctx.held(prior, *slot),
            "",
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Planning
// ---------------------------------------------------------------------------------------------

/// One planned user turn: the acts, their texts and the gold state after it.
#[derive(Debug, Clone)]
struct PlannedTurn {
    system_act: SystemAct,
    user_act: UserAct,
    system: String,
    pieces: Vec<Piece>,
    state: DialogueState,
}

impl PlannedTurn {
    fn kind(&self) -> &'static str {
        kind(&self.system_act, &self.user_act)
    }
    fn template_ids(&self) -> String {
        self.pieces
            .iter()
            .map(Piece::id)
            .collect::<Vec<_>>()
            .join("+")
    }
}

fn is_concrete(v: &str) -> bool {
    v != UNSET && v != DONTCARE
}

/// A value of `slot` other than the one it holds.
fn other_value(ctx: &Ctx, state: &DialogueState, slot: usize, rng: &mut ChaCha8Rng) -> usize {
    let held = ctx.value_index(slot, ctx.held(state, slot));
    let n = ctx.slots[slot].values.len();
    let choices: Vec<usize> = (0..n).filter(|&v| Some(v) != held).collect();
    *choices.choose(rng).unwrap_or(&0)
}

/// An intent to state: the service's first (search) intent three times in four.
fn first_intent(ctx: &Ctx, rng: &mut ChaCha8Rng) -> usize {
    if rng.random_range(0..4) < 3 {
        0
    } else {
        rng.random_range(0..ctx.spec.intents.len())
    }
}

/// An intent other than the active one.
fn switch_intent(ctx: &Ctx, state: &DialogueState, rng: &mut ChaCha8Rng) -> usize {
    let others: Vec<usize> = (0..ctx.spec.intents.len())
        .filter(|&i| ctx.spec.intents[i].name != state[INTENT_FIELD])
        .collect();
    *others.choose(rng).unwrap_or(&0)
}

/// One act on `slot` that its state allows: a value for UNSET (or no preference), a change,
/// a cancellation or no preference for a held value, a value or a cancellation for DONTCARE.
fn slot_act(ctx: &Ctx, state: &DialogueState, slot: usize, rng: &mut ChaCha8Rng) -> Act {
    let held = ctx.held(state, slot);
    let r = rng.random_range(0..4);
    let value = other_value(ctx, state, slot, rng);
    if held == UNSET {
        if r < 3 {
            Act::Inform { slot, value }
        } else {
            Act::DontCare { slot }
        }
    } else if held == DONTCARE {
        if r < 3 {
            Act::Inform { slot, value }
        } else {
            Act::Cancel { slot }
        }
    } else {
        match r {
            0 | 1 => Act::Change { slot, value },
            2 => Act::Cancel { slot },
            _ => Act::DontCare { slot },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Greeting,
    Intent,
    IntentInform,
    Inform,
    Change,
    Cancel,
    DontCare,
    SuggestAccept,
    SuggestReject,
    SuggestIgnore,
    Confirm,
    ChitChat,
    Switch,
    Double,
}

/// Draw the SYSTEM and USER acts of turn `t` (zero-based) from the state before it.
fn plan_turn(
    ctx: &Ctx,
    state: &DialogueState,
    t: usize,
    rng: &mut ChaCha8Rng,
) -> (SystemAct, UserAct) {
    let n = ctx.slots.len();
    let slots_where = |f: &dyn Fn(&str) -> bool| -> Vec<usize> {
        (0..n).filter(|&s| f(ctx.held(state, s))).collect()
    };
    let informable = slots_where(&|v| v == UNSET || v == DONTCARE);
    let concrete = slots_where(&|v| is_concrete(v));
    let cancellable = slots_where(&|v| v != UNSET);
    let indifferent_ok = slots_where(&|v| v != DONTCARE);
    let no_intent = state[INTENT_FIELD] == NONE_INTENT;

    let mut options: Vec<(u32, Choice)> = Vec::new();
    if t == 0 {
        options.extend([
            (1, Choice::Greeting),
            (6, Choice::Intent),
            (3, Choice::IntentInform),
        ]);
    } else if no_intent {
        options.extend([(2, Choice::Intent), (1, Choice::IntentInform)]);
    } else {
        let mut add = |ok: bool, w: u32, c: Choice| {
            if ok {
                options.push((w, c));
            }
        };
        add(!informable.is_empty(), 10, Choice::Inform);
        add(!concrete.is_empty(), 4, Choice::Change);
        add(!cancellable.is_empty(), 3, Choice::Cancel);
        add(!indifferent_ok.is_empty(), 3, Choice::DontCare);
        add(true, 4, Choice::SuggestAccept);
        add(true, 2, Choice::SuggestReject);
        add(true, 3, Choice::SuggestIgnore);
        add(!concrete.is_empty(), 2, Choice::Confirm);
        add(true, 2, Choice::ChitChat);
        add(ctx.spec.intents.len() > 1, 2, Choice::Switch);
        add(true, 3, Choice::Double);
    }
    let total: u32 = options.iter().map(|(w, _)| w).sum();
    let mut r = rng.random_range(0..total);
    let mut choice = options[0].1;
    for (w, c) in &options {
        if r < *w {
            choice = *c;
            break;
        }
        r -= w;
    }
    let system = if t == 0 {
        SystemAct::Opening
    } else {
        SystemAct::Generic
    };
    let pick = |v: &[usize], rng: &mut ChaCha8Rng| *v.choose(rng).unwrap_or(&0);
    let any_slot = |rng: &mut ChaCha8Rng| rng.random_range(0..n);
    let maybe_request = |slot: usize, rng: &mut ChaCha8Rng| {
        if t > 0 && rng.random_range(0..2) == 0 {
            SystemAct::Request { slot }
        } else {
            system.clone()
        }
    };
    match choice {
        Choice::Greeting => (system, UserAct::Greeting),
        Choice::Intent => {
            let intent = first_intent(ctx, rng);
            (
                system,
                UserAct::Acts(vec![Act::Intent {
                    intent,
                    switch: false,
                }]),
            )
        }
        Choice::IntentInform => {
            let intent = first_intent(ctx, rng);
            let slot = pick(&informable, rng);
            let value = other_value(ctx, state, slot, rng);
            (
                system,
                UserAct::Acts(vec![
                    Act::Intent {
                        intent,
                        switch: false,
                    },
                    Act::Inform { slot, value },
                ]),
            )
        }
        Choice::Inform => {
            let slot = pick(&informable, rng);
            let value = other_value(ctx, state, slot, rng);
            (
                maybe_request(slot, rng),
                UserAct::Acts(vec![Act::Inform { slot, value }]),
            )
        }
        Choice::Change => {
            let slot = pick(&concrete, rng);
            let value = other_value(ctx, state, slot, rng);
            (system, UserAct::Acts(vec![Act::Change { slot, value }]))
        }
        Choice::Cancel => {
            let slot = pick(&cancellable, rng);
            (system, UserAct::Acts(vec![Act::Cancel { slot }]))
        }
        Choice::DontCare => {
            let slot = pick(&indifferent_ok, rng);
            (
                maybe_request(slot, rng),
                UserAct::Acts(vec![Act::DontCare { slot }]),
            )
        }
        Choice::SuggestAccept | Choice::SuggestReject => {
            let slot = any_slot(rng);
            let value = other_value(ctx, state, slot, rng);
            let user = if choice == Choice::SuggestAccept {
                UserAct::Accept
            } else {
                UserAct::Reject
            };
            (SystemAct::Suggest { slot, value }, user)
        }
        Choice::SuggestIgnore => {
            let slot = any_slot(rng);
            let value = other_value(ctx, state, slot, rng);
            let others: Vec<usize> = (0..n).filter(|&s| s != slot).collect();
            let user = if others.is_empty() || rng.random_range(0..2) == 0 {
                UserAct::Defer
            } else {
                let other = pick(&others, rng);
                UserAct::Acts(vec![slot_act(ctx, state, other, rng)])
            };
            (SystemAct::Suggest { slot, value }, user)
        }
        Choice::Confirm => {
            let slot = pick(&concrete, rng);
            (SystemAct::Confirm { slot }, UserAct::ConfirmYes)
        }
        Choice::ChitChat => (system, UserAct::ChitChat),
        Choice::Switch => {
            let intent = switch_intent(ctx, state, rng);
            (
                system,
                UserAct::Acts(vec![Act::Intent {
                    intent,
                    switch: true,
                }]),
            )
        }
        Choice::Double => {
            // The intent change (if any) comes first, then a slot; or two distinct slots.
            let with_intent = n < 2 || rng.random_range(0..2) == 0;
            let mut acts = Vec::new();
            let mut slots: Vec<usize> = (0..n).collect();
            slots.shuffle(rng);
            if with_intent {
                let intent = switch_intent(ctx, state, rng);
                acts.push(Act::Intent {
                    intent,
                    switch: true,
                });
                acts.push(slot_act(ctx, state, slots[0], rng));
            } else {
                let (a, b) = (slots[0].min(slots[1]), slots[0].max(slots[1]));
                acts.push(slot_act(ctx, state, a, rng));
                acts.push(slot_act(ctx, state, b, rng));
            }
            (system, UserAct::Acts(acts))
        }
    }
}

/// C.1: "selection requires state changes and a nonempty categorical value": the state
/// changes after the first user turn, and some turn holds a slot value other than UNSET and
/// DONTCARE.
fn selection_rules_hold(slot_names: &[&str], turns: &[PlannedTurn]) -> bool {
    let changes = turns.windows(2).any(|w| w[0].state != w[1].state);
    let nonempty = turns.iter().any(|t| {
        slot_names
            .iter()
            .any(|s| t.state.get(*s).is_some_and(|v| is_concrete(v)))
    });
    changes && nonempty
}

/// Plan and render `turns` user turns.
fn plan_dialogue(ctx: &Ctx, turns: usize, rng: &mut ChaCha8Rng) -> Vec<PlannedTurn> {
    let mut state = ctx.initial_state();
    let mut out = Vec::with_capacity(turns);
    for t in 0..turns {
        let (system_act, user_act) = plan_turn(ctx, &state, t, rng);
        let system = system_text(ctx, &state, &system_act, rng);
        let pieces = user_pieces(ctx, &state, &system_act, &user_act, rng);
        let next = gold_after(ctx, &state, &system_act, &user_act);
        out.push(PlannedTurn {
            system_act,
            user_act,
            system,
            pieces,
            state: next.clone(),
        });
        state = next;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The bank
// ---------------------------------------------------------------------------------------------

/// One perturbed copy of the provenance's list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerturbationRecord {
    pub dialogue_id: String,
    pub perturbation: Perturbation,
    pub perturbation_of: String,
}

/// Provenance of the dialogue bank. Holds no timestamps, so rebuilding is byte-identical.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogueProvenance {
    pub generator: String,
    pub generator_version: String,
    pub seed: u64,
    pub field_order_seed: u64,
    /// What the bank is: a synthetic stand-in, not SGD.
    pub statement: String,
    /// What the search for a shipped copy of SGD found.
    pub source_check: String,
    /// The order of the JSONL's lines.
    pub bank_order: String,
    /// The construction rules, each with the passage it follows.
    pub rules: BTreeMap<String, String>,
    /// Dialogues, turns and fields per split, length, service, slot count and act.
    pub counts: BTreeMap<String, usize>,
    pub perturbations: Vec<PerturbationRecord>,
    /// SHA-256 of the bank file.
    pub files: BTreeMap<String, String>,
}

/// The dialogue bank: test dialogues, their perturbed copies and the development dialogues,
/// each in bank order.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogueBank {
    pub test: Vec<Dialogue>,
    pub perturbed: Vec<Dialogue>,
    pub dev: Vec<Dialogue>,
    pub provenance: DialogueProvenance,
}

impl DialogueBank {
    /// Every dialogue in file order: test, perturbed copies, development.
    pub fn dialogues(&self) -> impl Iterator<Item = &Dialogue> {
        self.test.iter().chain(&self.perturbed).chain(&self.dev)
    }

    /// The bank file's text: one dialogue JSON per line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for d in self.dialogues() {
            // Dialogues are plain data; serialization cannot fail.
            out.push_str(&serde_json::to_string(d).unwrap_or_default());
            out.push('\n');
        }
        out
    }
}

/// A generated base dialogue with the plan it came from.
struct Generated {
    dialogue: Dialogue,
    plan: Vec<PlannedTurn>,
    slots: Vec<usize>,
    service: usize,
}

fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

fn turns_of(plan: &[PlannedTurn], pieces: Option<&[Vec<Piece>]>) -> Vec<DialogueTurn> {
    plan.iter()
        .enumerate()
        .map(|(t, p)| DialogueTurn {
            system: p.system.clone(),
            user: compose(pieces.map_or(&p.pieces, |ps| &ps[t])),
            state: p.state.clone(),
        })
        .collect()
}

fn origin_of(seed: u64, head: &str, plan: &[PlannedTurn], pieces: Option<&[Vec<Piece>]>) -> String {
    let turns: Vec<String> = plan
        .iter()
        .enumerate()
        .map(|(t, p)| {
            let ids = match pieces {
                Some(ps) => ps[t].iter().map(Piece::id).collect::<Vec<_>>().join("+"),
                None => p.template_ids(),
            };
            format!("t{} {}[{ids}]", t + 1, p.kind())
        })
        .collect();
    format!(
        "{DIALOGUE_GENERATOR_VERSION}; seed {seed}; {head}; turns: {}",
        turns.join(" | ")
    )
}

/// Draw one base dialogue of `turns` user turns over service `service` with `slot_count`
/// slots from its own stream, redrawing until the selection rules hold and its user
/// utterances are new to the bank (`seen`).
#[allow(clippy::too_many_arguments)]
fn generate(
    seed: u64,
    stream_id: u64,
    split: DialogueSplit,
    number: usize,
    service: usize,
    slot_count: usize,
    turns: usize,
    seen: &mut BTreeSet<Vec<String>>,
) -> Result<Generated, DialogueBankError> {
    let spec = &SERVICES[service];
    let mut rng = stream(seed, stream_id);
    let mut slots: Vec<usize> = rand::seq::index::sample(&mut rng, spec.slots.len(), slot_count)
        .into_iter()
        .collect();
    slots.sort_unstable();
    let slot_specs: Vec<&SlotSpec> = slots.iter().map(|&i| &spec.slots[i]).collect();
    let names: Vec<&str> = slot_specs.iter().map(|s| s.name).collect();
    let ctx = Ctx {
        spec,
        slots: &slot_specs,
    };
    let id = format!(
        "{DIALOGUE_ID_PREFIX}:{}:{}:{number:03}",
        split.as_str(),
        spec.name.to_lowercase()
    );
    for attempt in 1..=MAX_ATTEMPTS {
        let plan = plan_dialogue(&ctx, turns, &mut rng);
        if !selection_rules_hold(&names, &plan) {
            continue;
        }
        let turns = turns_of(&plan, None);
        let users: Vec<String> = turns.iter().map(|t| t.user.clone()).collect();
        if !seen.insert(users) {
            continue;
        }
        let head = format!(
            "{} stream {stream_id}, draw {attempt}; slots {}",
            split.as_str(),
            names.join(",")
        );
        let dialogue = Dialogue {
            dialogue_id: id,
            split,
            service: service_schema(spec, &slots),
            field_order: Vec::new(),
            turns,
            perturbation: None,
            perturbation_of: None,
            origin: origin_of(seed, &head, &plan, None),
        };
        return Ok(Generated {
            dialogue,
            plan,
            slots,
            service,
        });
    }
    Err(DialogueBankError::Build(format!(
        "{id}: no draw in {MAX_ATTEMPTS} met the selection rules"
    )))
}

/// Another paraphrase alternative of every clause of every user turn.
fn paraphrase_pieces(plan: &[PlannedTurn], rng: &mut ChaCha8Rng) -> Vec<Vec<Piece>> {
    plan.iter()
        .map(|p| {
            p.pieces
                .iter()
                .map(|piece| {
                    let n = piece.alts.len();
                    let mut q = piece.clone();
                    if n > 1 {
                        q.idx = (piece.idx + 1 + rng.random_range(0..n - 1)) % n;
                    }
                    q
                })
                .collect()
        })
        .collect()
}

/// Shuffle until the order differs from the original (for two or more elements).
fn shuffle_different<T: Clone + PartialEq>(v: &mut [T], rng: &mut ChaCha8Rng) {
    if v.len() < 2 {
        return;
    }
    let original = v.to_vec();
    while v == original.as_slice() {
        v.shuffle(rng);
    }
}

/// The schema with the intents and each slot's values in a new seeded order.
fn permute_values(service: &DialogueService, rng: &mut ChaCha8Rng) -> DialogueService {
    let mut s = service.clone();
    shuffle_different(&mut s.intents, rng);
    for slot in &mut s.slots {
        shuffle_different(&mut slot.values, rng);
    }
    s
}

/// Everything the builder makes, with the plans of the base dialogues (tests read them).
struct Built {
    bank: DialogueBank,
    /// Plans of the test then the development dialogues, in bank order.
    #[cfg_attr(not(test), allow(dead_code))]
    plans: Vec<Vec<PlannedTurn>>,
}

fn build(seed: u64) -> Result<Built, DialogueBankError> {
    let mut layout = stream(seed, STREAM_LAYOUT);
    let mut order: Vec<usize> = (0..SERVICES.len()).collect();
    order.shuffle(&mut layout);
    let mut dev_order = order.clone();
    dev_order.shuffle(&mut layout);

    let mut seen = BTreeSet::new();
    let mut numbers: BTreeMap<(DialogueSplit, usize), usize> = BTreeMap::new();
    let mut next_number = |split: DialogueSplit, service: usize| {
        let n = numbers.entry((split, service)).or_default();
        *n += 1;
        *n
    };
    let mut generated: Vec<Generated> = Vec::new();
    // Test: 32 per length; services cycle through a seeded order, so each appears 9 or 10
    // times; the slot counts of each length are a seeded arrangement of TEST_SLOT_COUNTS.
    for (g, &turns) in DIALOGUE_LENGTHS.iter().enumerate() {
        let mut counts: Vec<usize> = TEST_SLOT_COUNTS[g]
            .iter()
            .enumerate()
            .flat_map(|(k, &m)| std::iter::repeat_n(k + 1, m))
            .collect();
        counts.shuffle(&mut layout);
        for (i, &slot_count) in counts.iter().enumerate() {
            let p = g * TEST_PER_LENGTH + i;
            let service = order[p % SERVICES.len()];
            let number = next_number(DialogueSplit::Test, service);
            generated.push(generate(
                seed,
                STREAM_TEST + p as u64,
                DialogueSplit::Test,
                number,
                service,
                slot_count,
                turns,
                &mut seen,
            )?);
        }
    }
    for (g, &turns) in DIALOGUE_LENGTHS.iter().enumerate() {
        let mut counts = DEV_SLOT_COUNTS.to_vec();
        counts.shuffle(&mut layout);
        for (i, &slot_count) in counts.iter().enumerate() {
            let p = g * DEV_PER_LENGTH + i;
            let service = dev_order[p % SERVICES.len()];
            let number = next_number(DialogueSplit::Dev, service);
            generated.push(generate(
                seed,
                STREAM_DEV + p as u64,
                DialogueSplit::Dev,
                number,
                service,
                slot_count,
                turns,
                &mut seen,
            )?);
        }
    }

    // Field order: one stream from 20261009, one shuffle per dialogue in bank order.
    let mut field_rng = ChaCha8Rng::seed_from_u64(FIELD_ORDER_SEED);
    for g in &mut generated {
        let mut fields = g.dialogue.service.fields();
        fields.shuffle(&mut field_rng);
        g.dialogue.field_order = fields;
    }

    // Perturbations: four test dialogues per length paraphrased, two of them also permuted.
    let mut choice = stream(seed, STREAM_PERTURBATION_CHOICE);
    let mut paraphrased = Vec::new();
    let mut permuted = BTreeSet::new();
    for g in 0..DIALOGUE_LENGTHS.len() {
        let per_length = PARAPHRASED / DIALOGUE_LENGTHS.len();
        let mut picks: Vec<usize> =
            rand::seq::index::sample(&mut choice, TEST_PER_LENGTH, per_length)
                .into_iter()
                .map(|i| g * TEST_PER_LENGTH + i)
                .collect();
        picks.sort_unstable();
        let chosen = picks
            .choose_multiple(&mut choice, PERMUTED / DIALOGUE_LENGTHS.len())
            .copied()
            .collect::<Vec<_>>();
        permuted.extend(chosen);
        paraphrased.extend(picks);
    }
    let mut perturbed = Vec::new();
    let mut records = Vec::new();
    for &i in &paraphrased {
        let base = &generated[i];
        let d = &base.dialogue;
        let mut rng = stream(seed, STREAM_PARAPHRASE + i as u64);
        let pieces = paraphrase_pieces(&base.plan, &mut rng);
        let mut copy = d.clone();
        copy.dialogue_id = format!("{}:{}", d.dialogue_id, Perturbation::Paraphrase.as_str());
        copy.perturbation = Some(Perturbation::Paraphrase);
        copy.perturbation_of = Some(d.dialogue_id.clone());
        copy.turns = turns_of(&base.plan, Some(&pieces));
        copy.origin = origin_of(
            seed,
            &format!(
                "paraphrase of {} (stream {})",
                d.dialogue_id,
                STREAM_PARAPHRASE + i as u64
            ),
            &base.plan,
            Some(&pieces),
        );
        perturbed.push(copy);
        records.push(PerturbationRecord {
            dialogue_id: format!("{}:{}", d.dialogue_id, Perturbation::Paraphrase.as_str()),
            perturbation: Perturbation::Paraphrase,
            perturbation_of: d.dialogue_id.clone(),
        });
        if permuted.contains(&i) {
            let mut rng = stream(seed, STREAM_PERMUTATION + i as u64);
            let mut copy = d.clone();
            let tag = Perturbation::ValuePermutation.as_str();
            copy.dialogue_id = format!("{}:{tag}", d.dialogue_id);
            copy.perturbation = Some(Perturbation::ValuePermutation);
            copy.perturbation_of = Some(d.dialogue_id.clone());
            copy.service = permute_values(&d.service, &mut rng);
            copy.origin = format!(
                "{}; value permutation of {} (stream {})",
                d.origin,
                d.dialogue_id,
                STREAM_PERMUTATION + i as u64
            );
            records.push(PerturbationRecord {
                dialogue_id: copy.dialogue_id.clone(),
                perturbation: Perturbation::ValuePermutation,
                perturbation_of: d.dialogue_id.clone(),
            });
            perturbed.push(copy);
        }
    }

    let n_test = DIALOGUE_LENGTHS.len() * TEST_PER_LENGTH;
    let plans: Vec<Vec<PlannedTurn>> = generated.iter().map(|g| g.plan.clone()).collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for g in &generated {
        let d = &g.dialogue;
        let split = d.split.as_str();
        let mut bump = |k: String, n: usize| *counts.entry(k).or_default() += n;
        bump(format!("{split}/dialogues"), 1);
        bump(format!("{split}/turns/{}", d.turns.len()), 1);
        bump(format!("{split}/service/{}", SERVICES[g.service].name), 1);
        bump(format!("{split}/slots/{}", g.slots.len()), 1);
        bump(format!("{split}/user_turns"), d.turns.len());
        bump(
            format!("{split}/field_turns"),
            d.turns.len() * d.field_order.len(),
        );
        for p in &g.plan {
            bump(format!("{split}/act/{}", p.kind()), 1);
        }
    }
    for d in &perturbed {
        if let Some(p) = d.perturbation {
            *counts
                .entry(format!("perturbation/{}", p.as_str()))
                .or_default() += 1;
        }
    }
    let dev: Vec<Dialogue> = generated[n_test..]
        .iter()
        .map(|g| g.dialogue.clone())
        .collect();
    let test: Vec<Dialogue> = generated[..n_test]
        .iter()
        .map(|g| g.dialogue.clone())
        .collect();
    counts.insert(
        "lines".to_string(),
        test.len() + perturbed.len() + dev.len(),
    );

    let rules: BTreeMap<String, String> = [
        ("prefixes", "C.1: \"The 96 test prefixes contain four, six or eight user turns (32 each), cover ten services (at most twelve dialogues per service), and have one to three categorical slots plus active intent.\" Services cycle through a seeded order (9 or 10 test dialogues each); slot counts per length 1/2/3 = 8/16/8, 10/14/8, 8/16/8, so the test bank has C.2's 576 user turns and 1,716 field turns."),
        ("service", "C.1: \"A service persists throughout each prefix.\" One service per dialogue; its schema holds all the service's intents and the dialogue's one to three slots (drawn, in schema order)."),
        ("selection", "C.1: \"selection requires state changes and a nonempty categorical value\": a draw is kept only if the state changes after the first user turn and some turn holds a slot value other than UNSET and DONTCARE; otherwise the dialogue is redrawn from its own stream."),
        ("initial_state", "C.1: \"Initial intent is NONE, absent slots UNSET and explicit indifference DONTCARE.\""),
        ("gold_state", "E.4: \"Preserve earlier user-provided slot values unless the user changes or cancels them. Ignore SYSTEM suggestions unless accepted by the user. UNSET means no value is held; DONTCARE means the user explicitly has no preference. Select the current active intent, or NONE if no intent is active.\" Acts: greeting (no change), intent, inform, change, cancel (UNSET), dontcare (DONTCARE), suggest_accept (the suggested value), suggest_reject and suggest_ignore (suggested slot unchanged; ignoring defers or acts on another field), confirm and chitchat (no change), switch_intent (slots kept), double (two fields change)."),
        ("dev", "C.1: \"Twelve development prefixes are disjoint by split, identifier and content.\" Four per length, their own ids (sgdsyn:dev:...) and streams; no dialogue's user-utterance sequence equals another's in the bank."),
        ("field_order", "C.2: \"Field order uses seed 20261009.\" E.4: \"The field order is fixed before outcomes.\" One ChaCha8Rng seeded 20261009 shuffles each dialogue's fields (active_intent then its slots), one shuffle per dialogue in bank order: test, then dev. Perturbed copies keep their base's order."),
        ("perturbations", "C.2: \"Twelve test dialogues receive one task-preserving paraphrase; six of these also receive one permutation of displayed semantic values.\" Four test dialogues per length paraphrased (every user utterance re-rendered with another alternative of each of its templates; system texts, schema and gold states unchanged); two of them per length also get a copy whose intents and slot values are displayed in a seeded order differing from the original for every field (texts and gold states unchanged)."),
        ("texts", "Templates with two to four alternatives per act; values appear as the schema spells them; origin records the act and template ids of every turn."),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();

    let mut bank = DialogueBank {
        test,
        perturbed,
        dev,
        provenance: DialogueProvenance {
            generator: "c2s-banks::dialogue (banks/src/dialogue.rs)".to_string(),
            generator_version: DIALOGUE_GENERATOR_VERSION.to_string(),
            seed,
            field_order_seed: FIELD_ORDER_SEED,
            statement: DIALOGUE_STATEMENT.to_string(),
            source_check: DIALOGUE_SOURCE_CHECK.to_string(),
            bank_order: "96 test dialogues (4, 6, 8 user turns, 32 each), then the perturbed copies (by base in bank order, paraphrase before value_permutation), then 12 dev dialogues (4 per length)".to_string(),
            rules,
            counts,
            perturbations: records,
            files: BTreeMap::new(),
        },
    };
    for d in bank.dialogues() {
        d.validate()?;
    }
    let sha = crate::bank::sha256_hex(bank.to_jsonl().as_bytes());
    bank.provenance.files.insert(DIALOGUE_FILE.to_string(), sha);
    Ok(Built { bank, plans })
}

/// Build the dialogue bank from `seed` (deterministic: the same seed gives the same bytes).
/// Every dialogue is validated with [`Dialogue::validate`]; the provenance holds the bank
/// file's SHA-256.
pub fn build_dialogue_bank(seed: u64) -> Result<DialogueBank, DialogueBankError> {
    build(seed).map(|b| b.bank)
}

fn write_file(path: &Path, text: &str) -> Result<(), DialogueBankError> {
    std::fs::write(path, text).map_err(|e| DialogueBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// Write `dialogue-synthetic.jsonl` and `dialogue-provenance.json` into `dir`.
pub fn write_dialogue_bank(bank: &DialogueBank, dir: &Path) -> Result<(), DialogueBankError> {
    std::fs::create_dir_all(dir).map_err(|e| DialogueBankError::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    write_file(&dir.join(DIALOGUE_FILE), &bank.to_jsonl())?;
    let mut text = serde_json::to_string_pretty(&bank.provenance).unwrap_or_default();
    text.push('\n');
    write_file(&dir.join(DIALOGUE_PROVENANCE), &text)
}

/// Read a dialogue bank file (JSONL), validating every dialogue.
pub fn read_dialogue_bank(path: &Path) -> Result<Vec<Dialogue>, DialogueBankError> {
    let text = std::fs::read_to_string(path).map_err(|e| DialogueBankError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let d = c2s_records::parse_dialogue(line).map_err(|message| DialogueBankError::Parse {
            path: path.display().to_string(),
            line: i + 1,
            message,
        })?;
        d.validate()?;
        out.push(d);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn built() -> Built {
        build(DEFAULT_DIALOGUE_SEED).unwrap()
    }

    fn values(s: &DialogueService, field: &str) -> Vec<String> {
        s.legal_values(field)
            .unwrap()
            .into_iter()
            .map(|v| v.value)
            .collect()
    }

    /// Ten services modelled on SGD's domains: two or three intents, three or four
    /// categorical slots of two to five values, stable ids and one-sentence descriptions;
    /// every act has at least two paraphrase alternatives.
    #[test]
    fn catalogue_has_ten_services_with_described_values() {
        let catalogue = service_catalogue();
        assert_eq!(catalogue.len(), 10);
        let names: BTreeSet<&str> = catalogue.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 10);
        for (s, spec) in catalogue.iter().zip(&SERVICES) {
            assert!((2..=3).contains(&s.intents.len()), "{}", s.name);
            assert!((3..=4).contains(&s.slots.len()), "{}", s.name);
            assert!(s.description.ends_with('.'));
            for i in &s.intents {
                assert_eq!(i.id, format!("intent:{}", i.value));
                assert!(i.value.chars().next().unwrap().is_ascii_uppercase());
                assert!(!i.value.contains(' ') && !i.value.contains('_'));
                assert!(i.description.ends_with('.'));
            }
            for i in spec.intents {
                assert!(i.requests.len() >= 2, "{}", i.name);
            }
            for slot in &s.slots {
                assert!((2..=5).contains(&slot.values.len()), "{}", slot.name);
                assert!(slot
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'));
                assert!(slot.description.ends_with('.'));
                for v in &slot.values {
                    assert_eq!(v.id, format!("{}:{}", slot.name, slug(&v.value)));
                    assert!(v.description.ends_with('.'), "{}", v.id);
                }
            }
            // The full schema passes the record's own checks.
            let mut st = s.initial_state();
            st.insert(INTENT_FIELD.into(), s.intents[0].value.clone());
            let d = Dialogue {
                dialogue_id: "x".into(),
                split: DialogueSplit::Test,
                service: s.clone(),
                field_order: s.fields(),
                turns: vec![DialogueTurn {
                    system: String::new(),
                    user: "hi".into(),
                    state: st,
                }],
                perturbation: None,
                perturbation_of: None,
                origin: String::new(),
            };
            d.validate().unwrap();
        }
        for t in [
            T_GREETING,
            T_INFORM,
            T_CHANGE,
            T_CANCEL,
            T_DONTCARE,
            T_ACCEPT,
            T_REJECT,
            T_DEFER,
            T_CHITCHAT,
            T_CONFIRM_YES,
            T_CONNECTOR,
        ] {
            assert!(t.len() >= 2);
            assert_eq!(t.iter().collect::<BTreeSet<_>>().len(), t.len());
            assert!(t.iter().all(|s| !s.starts_with('{')));
        }
    }

    /// C.1: "The 96 test prefixes contain four, six or eight user turns (32 each), cover ten
    /// services (at most twelve dialogues per service), and have one to three categorical
    /// slots plus active intent." "Twelve development prefixes". C.2: "96 dialogues, 576
    /// user turns and 1,716 field turns".
    #[test]
    fn counts_follow_the_paper() {
        let bank = built().bank;
        assert_eq!(bank.test.len(), 96);
        assert_eq!(bank.dev.len(), 12);
        assert_eq!(bank.perturbed.len(), 18);
        for (split, dialogues, per_length) in [
            (DialogueSplit::Test, &bank.test, 32),
            (DialogueSplit::Dev, &bank.dev, 4),
        ] {
            let mut by_length: BTreeMap<usize, usize> = BTreeMap::new();
            for d in dialogues.iter() {
                assert_eq!(d.split, split);
                *by_length.entry(d.turns.len()).or_default() += 1;
                let slots = d.service.slots.len();
                assert!((1..=3).contains(&slots), "{}", d.dialogue_id);
                let mut fields = vec![INTENT_FIELD.to_string()];
                fields.extend(d.service.slots.iter().map(|s| s.name.clone()));
                assert_eq!(d.service.fields(), fields);
            }
            assert_eq!(
                by_length,
                [(4, per_length), (6, per_length), (8, per_length)].into()
            );
        }
        let mut per_service: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &bank.test {
            *per_service.entry(d.service.name.as_str()).or_default() += 1;
        }
        assert_eq!(per_service.len(), 10, "ten services");
        assert!(per_service.values().all(|&n| n <= MAX_PER_SERVICE));
        let user_turns: usize = bank.test.iter().map(|d| d.turns.len()).sum();
        let field_turns: usize = bank
            .test
            .iter()
            .map(|d| d.turns.len() * d.field_order.len())
            .sum();
        assert_eq!((user_turns, field_turns), (576, 1716));
        let c = &bank.provenance.counts;
        assert_eq!(c["test/dialogues"], 96);
        assert_eq!(c["dev/dialogues"], 12);
        assert_eq!(c["test/field_turns"], 1716);
        assert_eq!(c["lines"], 126);
        assert_eq!(bank.to_jsonl().lines().count(), 126);
    }

    /// Every dialogue validates; ids are unique and shaped `sgdsyn:<split>:<service>:<nnn>`;
    /// "A service persists throughout each prefix" (one service per dialogue, its fields in
    /// every state); the first state comes from "Initial intent is NONE, absent slots UNSET".
    #[test]
    fn every_dialogue_validates_with_unique_ids() {
        let b = built();
        let mut ids = BTreeSet::new();
        for d in b.bank.dialogues() {
            d.validate().unwrap();
            assert!(ids.insert(d.dialogue_id.clone()), "{}", d.dialogue_id);
            let parts: Vec<&str> = d.dialogue_id.split(':').collect();
            assert_eq!(parts[0], "sgdsyn");
            assert_eq!(parts[1], d.split.as_str());
            assert_eq!(parts[2], d.service.name.to_lowercase());
            assert_eq!(parts[3].len(), 3);
            assert_eq!(parts.len(), if d.perturbation.is_some() { 5 } else { 4 });
            assert!(
                d.turns[0].system.is_empty(),
                "no SYSTEM turn before the first"
            );
            assert!(d.turns[1..].iter().all(|t| !t.system.is_empty()));
            assert!(d.origin.starts_with(DIALOGUE_GENERATOR_VERSION));
            assert!(d.origin.contains("seed 20261201"));
        }
        for (d, plan) in b.bank.test.iter().chain(&b.bank.dev).zip(&b.plans) {
            // Turn 1 starts from the initial state: only the fields it touches differ.
            let init = d.service.initial_state();
            let first = &plan[0];
            let touched: BTreeSet<String> = match &first.user_act {
                UserAct::Acts(acts) => acts
                    .iter()
                    .map(|a| match a {
                        Act::Intent { .. } => INTENT_FIELD.to_string(),
                        Act::Inform { slot, .. }
                        | Act::Change { slot, .. }
                        | Act::Cancel { slot }
                        | Act::DontCare { slot } => d.service.slots[*slot].name.clone(),
                    })
                    .collect(),
                _ => BTreeSet::new(),
            };
            for (f, v) in &d.turns[0].state {
                if !touched.contains(f) {
                    assert_eq!(v, &init[f], "{} {f}", d.dialogue_id);
                }
            }
        }
    }

    /// C.1: "selection requires state changes and a nonempty categorical value".
    #[test]
    fn every_dialogue_changes_state_and_holds_a_value() {
        let bank = built().bank;
        for d in bank.dialogues() {
            let changes = d.turns.windows(2).any(|w| w[0].state != w[1].state);
            assert!(changes, "{}: no state change after turn 1", d.dialogue_id);
            let nonempty = d.turns.iter().any(|t| {
                d.service
                    .slots
                    .iter()
                    .any(|s| is_concrete(&t.state[&s.name]))
            });
            assert!(nonempty, "{}: no categorical value", d.dialogue_id);
        }
    }

    /// C.1: "Twelve development prefixes are disjoint by split, identifier and content."
    #[test]
    fn dev_is_disjoint_from_test() {
        let bank = built().bank;
        let test_ids: BTreeSet<&str> = bank
            .test
            .iter()
            .chain(&bank.perturbed)
            .map(|d| d.dialogue_id.as_str())
            .collect();
        let test_users: BTreeSet<Vec<&str>> = bank
            .test
            .iter()
            .chain(&bank.perturbed)
            .map(|d| d.turns.iter().map(|t| t.user.as_str()).collect())
            .collect();
        for d in &bank.dev {
            assert_eq!(d.split, DialogueSplit::Dev);
            assert!(d.dialogue_id.starts_with("sgdsyn:dev:"));
            assert!(!test_ids.contains(d.dialogue_id.as_str()));
            let users: Vec<&str> = d.turns.iter().map(|t| t.user.as_str()).collect();
            assert!(!test_users.contains(&users), "{}", d.dialogue_id);
        }
        assert!(bank
            .test
            .iter()
            .chain(&bank.perturbed)
            .all(|d| d.split == DialogueSplit::Test && d.dialogue_id.starts_with("sgdsyn:test:")));
        // Within the bank's base dialogues too, no two share their user utterances.
        let all: BTreeSet<Vec<&str>> = bank
            .test
            .iter()
            .chain(&bank.dev)
            .map(|d| d.turns.iter().map(|t| t.user.as_str()).collect())
            .collect();
        assert_eq!(all.len(), 108);
    }

    /// C.2: "Field order uses seed 20261009"; E.4: "The field order is fixed before
    /// outcomes." One ChaCha8Rng from 20261009 shuffles each base dialogue's fields in bank
    /// order (test, then dev); perturbed copies keep their base's order.
    #[test]
    fn field_order_comes_from_seed_20261009_in_bank_order() {
        let bank = built().bank;
        let mut rng = ChaCha8Rng::seed_from_u64(20_261_009);
        let mut shuffled = 0;
        for d in bank.test.iter().chain(&bank.dev) {
            let mut fields = d.service.fields();
            fields.shuffle(&mut rng);
            assert_eq!(d.field_order, fields, "{}", d.dialogue_id);
            if d.field_order != d.service.fields() {
                shuffled += 1;
            }
        }
        assert!(shuffled > 40, "{shuffled}");
        let by_id: BTreeMap<&str, &Dialogue> = bank
            .test
            .iter()
            .map(|d| (d.dialogue_id.as_str(), d))
            .collect();
        for p in &bank.perturbed {
            let base = by_id[p.perturbation_of.as_deref().unwrap()];
            assert_eq!(p.field_order, base.field_order);
        }
    }

    /// C.2: "Twelve test dialogues receive one task-preserving paraphrase; six of these also
    /// receive one permutation of displayed semantic values."
    #[test]
    fn perturbation_schedule() {
        let bank = built().bank;
        let by_id: BTreeMap<&str, &Dialogue> = bank
            .test
            .iter()
            .map(|d| (d.dialogue_id.as_str(), d))
            .collect();
        let of = |p: Perturbation| -> Vec<&Dialogue> {
            bank.perturbed
                .iter()
                .filter(|d| d.perturbation == Some(p))
                .collect()
        };
        let para = of(Perturbation::Paraphrase);
        let perm = of(Perturbation::ValuePermutation);
        assert_eq!((para.len(), perm.len()), (PARAPHRASED, PERMUTED));
        let para_bases: BTreeSet<&str> = para
            .iter()
            .map(|d| d.perturbation_of.as_deref().unwrap())
            .collect();
        let perm_bases: BTreeSet<&str> = perm
            .iter()
            .map(|d| d.perturbation_of.as_deref().unwrap())
            .collect();
        assert_eq!(para_bases.len(), 12);
        assert!(perm_bases.is_subset(&para_bases), "six of these");
        for (bases, per_length) in [(&para_bases, 4), (&perm_bases, 2)] {
            let mut by_length: BTreeMap<usize, usize> = BTreeMap::new();
            for b in bases.iter() {
                *by_length.entry(by_id[b].turns.len()).or_default() += 1;
            }
            assert_eq!(
                by_length,
                [(4, per_length), (6, per_length), (8, per_length)].into()
            );
        }
        for d in &bank.perturbed {
            let base = by_id[d.perturbation_of.as_deref().unwrap()];
            assert_eq!(d.split, DialogueSplit::Test);
            assert_eq!(
                d.dialogue_id,
                format!("{}:{}", base.dialogue_id, d.perturbation.unwrap().as_str())
            );
            assert_eq!(d.base_id(), base.dialogue_id);
            assert_eq!(d.turns.len(), base.turns.len());
            for (t, b) in d.turns.iter().zip(&base.turns) {
                assert_eq!(t.state, b.state, "gold states identical");
                assert_eq!(t.system, b.system);
            }
            match d.perturbation.unwrap() {
                Perturbation::Paraphrase => {
                    assert_eq!(d.service, base.service);
                    for (t, b) in d.turns.iter().zip(&base.turns) {
                        assert_ne!(t.user, b.user, "{}: every user utterance", d.dialogue_id);
                    }
                }
                Perturbation::ValuePermutation => {
                    for (t, b) in d.turns.iter().zip(&base.turns) {
                        assert_eq!(t.user, b.user);
                    }
                    assert_eq!(d.service.name, base.service.name);
                    assert_eq!(d.service.fields(), base.service.fields());
                    for f in base.service.fields() {
                        let (a, b) = (values(&d.service, &f), values(&base.service, &f));
                        assert_ne!(a, b, "{}: {f} order must differ", d.dialogue_id);
                        let sa: BTreeSet<_> = d
                            .service
                            .legal_values(&f)
                            .unwrap()
                            .into_iter()
                            .map(|v| (v.id, v.value, v.description))
                            .collect();
                        let sb: BTreeSet<_> = base
                            .service
                            .legal_values(&f)
                            .unwrap()
                            .into_iter()
                            .map(|v| (v.id, v.value, v.description))
                            .collect();
                        assert_eq!(sa, sb, "same values, ids and descriptions");
                    }
                }
            }
        }
        assert_eq!(bank.provenance.perturbations.len(), 18);
        // A paraphrase copy precedes the value permutation of the same base.
        for w in bank.perturbed.windows(2) {
            if w[1].perturbation == Some(Perturbation::ValuePermutation) {
                assert_eq!(w[0].perturbation, Some(Perturbation::Paraphrase));
                assert_eq!(w[0].perturbation_of, w[1].perturbation_of);
            }
        }
    }

    fn restaurant_slots() -> Vec<&'static SlotSpec> {
        vec![&SERVICES[0].slots[0], &SERVICES[0].slots[1]]
    }

    fn state(intent: &str, price: &str, cuisine: &str) -> DialogueState {
        [
            (INTENT_FIELD, intent),
            ("price_range", price),
            ("cuisine", cuisine),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// E.4: "Ignore SYSTEM suggestions unless accepted by the user." Hand-checked: the
    /// suggestion holds after an acceptance; after a rejection, a deferral or an answer about
    /// another slot the earlier value is preserved.
    #[test]
    fn suggestions_hold_only_when_accepted() {
        let slots = restaurant_slots();
        let ctx = Ctx {
            spec: &SERVICES[0],
            slots: &slots,
        };
        let prior = state("FindRestaurants", "moderate", UNSET);
        // "How about expensive for the price range?"
        let suggest = SystemAct::Suggest { slot: 0, value: 2 };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let said = system_text(&ctx, &prior, &suggest, &mut rng);
        assert!(
            said.contains("expensive") && said.contains("price range"),
            "{said}"
        );
        assert_eq!(
            gold_after(&ctx, &prior, &suggest, &UserAct::Accept),
            state("FindRestaurants", "expensive", UNSET)
        );
        for ignored in [UserAct::Reject, UserAct::Defer, UserAct::ChitChat] {
            assert_eq!(
                gold_after(&ctx, &prior, &suggest, &ignored),
                prior,
                "{ignored:?}"
            );
        }
        // Ignored by answering about another slot: that slot changes, the price does not.
        let other = UserAct::Acts(vec![Act::Inform { slot: 1, value: 0 }]);
        assert_eq!(
            gold_after(&ctx, &prior, &suggest, &other),
            state("FindRestaurants", "moderate", "Italian")
        );
        assert_eq!(kind(&suggest, &other), "suggest_ignore");
        let text = compose(&user_pieces(&ctx, &prior, &suggest, &other, &mut rng));
        assert!(
            text.contains("Italian") && !text.contains("expensive"),
            "{text}"
        );
        // A suggestion for an unset slot, accepted.
        let prior = state("FindRestaurants", UNSET, UNSET);
        let suggest = SystemAct::Suggest { slot: 1, value: 3 };
        assert_eq!(
            gold_after(&ctx, &prior, &suggest, &UserAct::Accept)["cuisine"],
            "Chinese"
        );
        assert_eq!(gold_after(&ctx, &prior, &suggest, &UserAct::Reject), prior);
    }

    /// E.4: "UNSET means no value is held; DONTCARE means the user explicitly has no
    /// preference", "Preserve earlier user-provided slot values unless the user changes or
    /// cancels them", "Select the current active intent, or NONE if no intent is active."
    #[test]
    fn cancel_unsets_no_preference_is_dontcare_and_values_persist() {
        let slots = restaurant_slots();
        let ctx = Ctx {
            spec: &SERVICES[0],
            slots: &slots,
        };
        let sys = SystemAct::Generic;
        let prior = state("FindRestaurants", "moderate", "Indian");
        let cancel = UserAct::Acts(vec![Act::Cancel { slot: 0 }]);
        assert_eq!(
            gold_after(&ctx, &prior, &sys, &cancel),
            state("FindRestaurants", UNSET, "Indian")
        );
        let dontcare = UserAct::Acts(vec![Act::DontCare { slot: 1 }]);
        assert_eq!(
            gold_after(&ctx, &prior, &sys, &dontcare),
            state("FindRestaurants", "moderate", DONTCARE)
        );
        let change = UserAct::Acts(vec![Act::Change { slot: 0, value: 0 }]);
        assert_eq!(
            gold_after(&ctx, &prior, &sys, &change),
            state("FindRestaurants", "inexpensive", "Indian")
        );
        // Switching intent keeps the slots; a double turn changes two fields.
        let switch = UserAct::Acts(vec![
            Act::Intent {
                intent: 1,
                switch: true,
            },
            Act::DontCare { slot: 0 },
        ]);
        assert_eq!(
            gold_after(&ctx, &prior, &sys, &switch),
            state("ReserveRestaurant", DONTCARE, "Indian")
        );
        // Chit-chat, a confirmation and a greeting change nothing.
        for user in [UserAct::ChitChat, UserAct::ConfirmYes, UserAct::Greeting] {
            assert_eq!(gold_after(&ctx, &prior, &sys, &user), prior);
        }
        let init = ctx.initial_state();
        assert_eq!(init, state(NONE_INTENT, UNSET, UNSET));
        // The texts say what the acts do.
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for (user, words) in [
            (&cancel, ["price range", "later"].as_slice()),
            (&change, ["inexpensive", "price range"].as_slice()),
        ] {
            let text = compose(&user_pieces(&ctx, &prior, &sys, user, &mut rng));
            assert!(
                words.iter().any(|w| text.contains(w)) && text.contains("price range"),
                "{text}"
            );
        }
        let text = compose(&user_pieces(&ctx, &prior, &sys, &switch, &mut rng));
        assert!(text.contains("price range"), "{text}");
        assert!(
            T_CONNECTOR.iter().any(|c| text.contains(&format!(" {c} "))),
            "{text}"
        );
    }

    /// Every turn of the bank follows the gold-state rules of its act, every act kind
    /// occurs, and a slot's new value appears in the exchange as the schema spells it.
    #[test]
    fn bank_turns_follow_the_rules_of_their_acts() {
        let b = built();
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for (d, plan) in b.bank.test.iter().chain(&b.bank.dev).zip(&b.plans) {
            let mut prior = d.service.initial_state();
            for (t, (turn, p)) in d.turns.iter().zip(plan).enumerate() {
                let k = p.kind();
                *kinds.entry(k).or_default() += 1;
                assert!(d.origin.contains(&format!("t{} {k}[", t + 1)));
                let changed: Vec<&String> = turn
                    .state
                    .iter()
                    .filter(|(f, v)| prior[*f] != **v)
                    .map(|(f, _)| f)
                    .collect();
                match (&p.system_act, &p.user_act) {
                    (SystemAct::Suggest { slot, value }, UserAct::Accept) => {
                        let name = &d.service.slots[*slot].name;
                        assert_eq!(
                            turn.state[name],
                            d.service.slots[*slot].values[*value].value
                        );
                        assert!(turn.system.contains(&turn.state[name]));
                    }
                    (SystemAct::Suggest { slot, .. }, _) => {
                        let name = &d.service.slots[*slot].name;
                        assert_eq!(turn.state[name], prior[name], "{} t{t}", d.dialogue_id);
                    }
                    _ => {}
                }
                match k {
                    "greeting" | "confirm" | "chitchat" | "suggest_reject" => {
                        assert!(changed.is_empty())
                    }
                    "double" => assert_eq!(changed.len(), 2, "{} t{t}", d.dialogue_id),
                    "cancel" => {
                        assert_eq!(changed.len(), 1);
                        assert_eq!(turn.state[changed[0]], UNSET);
                    }
                    "dontcare" => {
                        assert_eq!(changed.len(), 1);
                        assert_eq!(turn.state[changed[0]], DONTCARE);
                    }
                    "switch_intent" | "intent" => {
                        assert_eq!(changed, [INTENT_FIELD]);
                    }
                    _ => assert!(changed.len() <= 1),
                }
                for f in &changed {
                    let v = &turn.state[*f];
                    if f.as_str() != INTENT_FIELD && is_concrete(v) {
                        assert!(
                            turn.user.contains(v.as_str()) || turn.system.contains(v.as_str()),
                            "{} t{t}: `{v}` not in {:?} / {:?}",
                            d.dialogue_id,
                            turn.system,
                            turn.user
                        );
                    }
                }
                let spec = SERVICES.iter().find(|s| s.name == d.service.name).unwrap();
                let slots: Vec<&SlotSpec> = d
                    .service
                    .slots
                    .iter()
                    .map(|s| spec.slots.iter().find(|x| x.name == s.name).unwrap())
                    .collect();
                let ctx = Ctx {
                    spec,
                    slots: &slots,
                };
                assert_eq!(
                    turn.state,
                    gold_after(&ctx, &prior, &p.system_act, &p.user_act)
                );
                prior = turn.state.clone();
            }
        }
        for k in [
            "greeting",
            "intent",
            "inform",
            "change",
            "cancel",
            "dontcare",
            "suggest_accept",
            "suggest_reject",
            "suggest_ignore",
            "confirm",
            "chitchat",
            "switch_intent",
            "double",
        ] {
            assert!(
                kinds.get(k).copied().unwrap_or(0) >= 3,
                "act {k}: {kinds:?}"
            );
        }
    }

    /// Same seed, same bytes; another seed, another bank.
    #[test]
    fn generation_is_deterministic() {
        let a = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
        let b = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
        assert_eq!(a.to_jsonl(), b.to_jsonl());
        assert_eq!(a.provenance, b.provenance);
        let c = build_dialogue_bank(DEFAULT_DIALOGUE_SEED + 1).unwrap();
        assert_ne!(a.to_jsonl(), c.to_jsonl());
        c.dialogues().for_each(|d| d.validate().unwrap());
        assert_eq!(c.test.len(), 96);
    }

    /// The committed bank is the generator's output, byte for byte.
    /// `C2S_WRITE_DIALOGUE=1 cargo test -p c2s-banks committed_dialogue_bank` rewrites it
    /// (or `choice2seq bank dialogue --out data/banks`).
    #[test]
    fn committed_dialogue_bank_equals_the_generator() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/banks");
        let bank = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        write_dialogue_bank(&bank, tmp.path()).unwrap();
        if std::env::var_os("C2S_WRITE_DIALOGUE").is_some() {
            write_dialogue_bank(&bank, &dir).unwrap();
        }
        for name in [DIALOGUE_FILE, DIALOGUE_PROVENANCE] {
            let built = std::fs::read(tmp.path().join(name)).unwrap();
            let committed = std::fs::read(dir.join(name))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
            assert!(
                built == committed,
                "{name} differs from the generator's output"
            );
        }
        let text = std::fs::read(dir.join(DIALOGUE_FILE)).unwrap();
        assert_eq!(
            bank.provenance.files[DIALOGUE_FILE],
            crate::bank::sha256_hex(&text)
        );
        let read = read_dialogue_bank(&dir.join(DIALOGUE_FILE)).unwrap();
        assert_eq!(read, bank.dialogues().cloned().collect::<Vec<_>>());
        let prov: DialogueProvenance =
            serde_json::from_slice(&std::fs::read(dir.join(DIALOGUE_PROVENANCE)).unwrap()).unwrap();
        assert!(prov.statement.contains("not SGD: no SGD text is used"));
    }

    #[test]
    fn reading_rejects_bad_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("bad.jsonl");
        std::fs::write(&path, "{\n").unwrap();
        let e = read_dialogue_bank(&path).unwrap_err();
        assert!(e.to_string().contains(":1:"), "{e}");
        let bank = build_dialogue_bank(DEFAULT_DIALOGUE_SEED).unwrap();
        let mut d = bank.test[0].clone();
        d.field_order.pop();
        std::fs::write(&path, serde_json::to_string(&d).unwrap()).unwrap();
        assert!(matches!(
            read_dialogue_bank(&path),
            Err(DialogueBankError::Invalid(_))
        ));
    }
}
