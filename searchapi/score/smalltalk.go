package score

// SmallTalk are phrases of conversation that ask for nothing a catalog
// could hold: greetings, thanks, farewells, questions to the assistant
// itself. A request's highest cosine similarity with their vectors
// (Request.SmallTalk) is one of the confidence model's features: small talk
// often shares a word or two with some entry ("today", "name"), but its
// sentence vector lies near these, not near any entry.
//
// The list is written for the purpose and kept apart from the requests the
// model is fitted or evaluated on (the generated noise of the fit and the
// off-catalog list of make eval hold other phrases).
var SmallTalk = []string{
	"hello",
	"hi, how are you?",
	"hey, what's new with you",
	"good afternoon",
	"good evening, nice to see you",
	"how have you been lately",
	"how is your day going",
	"how do you feel today",
	"i'm fine, thank you",
	"thanks a lot",
	"thank you very much, that was helpful",
	"many thanks for your help",
	"goodbye",
	"talk to you later",
	"have a great day",
	"take care, bye",
	"who made you",
	"what are you",
	"are you a human or a machine",
	"do you have feelings",
	"tell me something about yourself",
	"where do you live",
	"how old are you",
	"what do you like to do for fun",
	"yes",
	"no",
	"maybe",
	"alright then",
	"fine",
	"great, perfect",
	"i don't know",
	"that makes sense",
	"really? interesting",
	"i'm bored",
	"just chatting",
	"can we talk for a bit",
	"you are awesome",
	"that's not what i meant",
	"forget it",
}
