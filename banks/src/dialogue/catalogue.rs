//! The service catalogue: ten services modelled on SGD domains, each with its intents and
//! categorical slots, their descriptions and the user requests that state each intent.

/// An intent of the catalogue: its name (the exact semantic value), description, and the
/// user requests that state it (the paraphrase alternatives of the `intent` act).
pub(super) struct IntentSpec {
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) requests: &'static [&'static str],
}

/// A categorical slot of the catalogue: its name, the noun phrase the templates use for it,
/// its description and its values with their descriptions, in schema order.
pub(super) struct SlotSpec {
    pub(super) name: &'static str,
    pub(super) noun: &'static str,
    pub(super) description: &'static str,
    pub(super) values: &'static [(&'static str, &'static str)],
}

/// A service of the catalogue, modelled on one SGD domain.
pub(super) struct ServiceSpec {
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) intents: &'static [IntentSpec],
    pub(super) slots: &'static [SlotSpec],
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

pub(super) const SERVICES: [ServiceSpec; 10] = [
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
