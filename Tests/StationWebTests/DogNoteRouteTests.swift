import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Testing
import WebAccounts

/// POST /api/dogs/{dog}/note: a trainer's notes reach lineupd as `dog-note` with the dog and
/// the text; an account that does not run sessions, a request without the CSRF token and a body
/// without text are refused, and nothing reaches lineupd.
@Suite struct DogNoteRouteTests {
    @Test func aTrainersNotesReachLineupdAndNoOneElses() async throws {
        let link = AddingLink()
        let state = WebState(users: try makeUsers(), link: link)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            for role in ["researcher1", "assistant1"] {
                let page = try #require(try await client.login(role).1)
                let refused = try await client.post(
                    "/api/dogs/Aino/note", json: #"{"text":"calmer"}"#, headers: page.postHeaders)
                #expect(refused.status == .forbidden, "\(role)")
                #expect(text(refused.body).contains("may not write a dog's notes"), "\(text(refused.body))")
            }
            let trainer = try #require(try await client.login("trainer1").1)
            var noToken = trainer.postHeaders
            noToken[HTTPField.Name("X-CSRF-Token")!] = nil
            let forged = try await client.post("/api/dogs/Aino/note", json: #"{"text":"calmer"}"#, headers: noToken)
            #expect(forged.status == .forbidden, "\(text(forged.body))")
            let bad = try await client.post(
                "/api/dogs/Aino/note", json: #"{"notes":"calmer"}"#, headers: trainer.postHeaders)
            #expect(bad.status == .badRequest)
            #expect(text(bad.body).contains("'text'"), "\(text(bad.body))")
            #expect(link.received.isEmpty, "\(link.received)")

            let saved = try await client.post(
                "/api/dogs/Aino%20B/note", json: #"{"text":"works 5 stations"}"#, headers: trainer.postHeaders)
            #expect(saved.status == .ok, "\(text(saved.body))")
            #expect(text(saved.body) == #"{"id":"new-id"}"#)
            // The name as typed (the page percent-encodes it in the path), and the text.
            #expect(link.received.count == 1, "\(link.received)")
            #expect(link.received.first?.hasPrefix("dog-note ") == true)
            #expect(link.received.first?.contains(#""dog":"Aino B""#) == true, "\(link.received)")
            #expect(link.received.first?.contains(#""text":"works 5 stations""#) == true, "\(link.received)")
        }
    }
}
