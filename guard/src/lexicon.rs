//! The guard's word classes, each written once with its six languages side by side.
//!
//! Every entry is a regular-expression fragment over the *normalised* text (see
//! [`crate::normalise`]): lower case, accents removed, `-` and `_` read as spaces, so
//! "opt-out" is written `opt out` and "contraseña" `contrasena`. A rule pattern names a
//! class as `{NAME}`; [`expand`] puts `\b(?:a|b|...)\b` in its place, and `~N` for a gap of
//! at most N words. A class is data: adding a word to it changes every rule that names it,
//! and the generic example tests of [`crate::rules`] show what moved.

/// A named list of alternatives.
#[derive(Debug, Clone, Copy)]
pub struct Class {
    pub name: &'static str,
    pub alts: &'static [&'static str],
}

macro_rules! classes {
    ($($name:ident = [$($alt:expr),* $(,)?];)*) => {
        $(pub const $name: Class = Class { name: stringify!($name), alts: &[$($alt),*] };)*
        /// Every class, for [`expand`] and the lexicon's own tests.
        pub const ALL: &[Class] = &[$($name),*];
    };
}

classes! {
    // negations and refusals: what stands a rule down when it comes before the match in
    // the same clause
    NEG = [
        "never", "not", "no", "nothing", "none", "nor", "neither", "cannot", "can't", "cant",
        "don't", "dont", "doesn't", "doesnt", "won't", "wont", "mustn't", "shouldn't", "without",
        "unless", "except", "excluding", "avoid\\w*", "refuse", "refuses", "refusing", "reject", "rejects", "rejecting", "decline", "declines", "declining", "instead of", "rather than",
        // de
        "nie", "niemals", "nicht", "kein\\w*", "ohne", "ausser", "es sei denn", "weder", "vermeide\\w*", "lehne\\w* ab",
        // fr
        "ne", "n'", "jamais", "pas", "aucun\\w*", "sans", "sauf", "evite\\w*", "refuse[zr]?", "refusent", "plutot que",
        // es
        "nunca", "jamas", "ningun\\w*", "sin", "salvo", "a menos que", "excepto", "evita\\w*", "rechaza", "rechazar", "rechace", "en lugar de",
        // it
        "non", "mai", "nessun\\w*", "senza", "tranne", "a meno che", "rifiuta", "rifiutare", "rifiuti", "invece di",
        // pt
        "nao", "nenhum\\w*", "sem", "exceto", "a nao ser que", "recusa", "recusar", "recuse", "em vez de",
    ];
    // a clause that says the act is forbidden, wherever it stands in the clause
    FORBIDDEN = [
        "forbidden", "prohibited", "not allowed", "never allowed", "is not permitted", "off limits",
        "must not", "may not", "should not", "is a violation", "counts as a violation",
        "verboten", "nicht erlaubt", "unzulassig",
        "interdit\\w*", "pas autorise\\w*",
        "prohibid\\w*", "no esta permitid\\w*",
        "vietat\\w*", "non e consentit\\w*",
        "proibid\\w*", "nao e permitid\\w*",
    ];
    // a clause that treats a request as something to refuse or report
    REFUSAL = [
        "(?:if|when|whenever|should) (?:a |an |any |the |some )?(?:\\w+ )?(?:message|text|span|memory|memories|request|user|turn|document|email|e mail|prompt|someone|somebody|anyone|instruction|conversation|chat|dialogue|page|tool output|input|skill|imported skill|party|person|sender|third party)s? (?:\\w+ ){0,3}(?:asks?|tells?|says?|requests?|tries|try|attempts?|contains?|includes?|instructs?|claims?|demands?|wants?|suggests?)",
        "ignor\\w* (?:any |all |such |every |the |le |las |les |die |as |os |ogni )?(?:\\w+ )?(?:requests?|richieste|solicitudes|peticiones|demandes|anfragen|aufforderungen|pedidos|attempts?|claims?|instructions?)",
        "(?:requests?|attempts?|instructions?) (?:to|that) [^.;]{0,60}(?:are|is) (?:refused|declined|ignored|rejected|not followed)",
        "(?:wenn|falls|sollte|si|se|cuando|quando|caso) (?:\\S+ ){0,5}(?:bittet|bitten|verlangt|fordert|auffordert|schreibt|sagt|enthalt|demande|exige|ecrit|dit|contient|pide|pida|solicita|escribe|dice|contiene|chiede|chieda|scrive|pede|pedir|solicitar|escreve|diz|contem)",
        "ignor\\w* (?:\\S+ ){0,2}(?:bitten|aufforderungen|anfragen|demandes|requetes|peticiones|solicitudes|pedidos|richieste|domande)",
        "treat (?:it|this|that|them|such \\w+|the request) as (?:suspicious|malicious|an attack|an injection|injection|untrusted|data)",
        "(?:flag|report|log) (?:it|this|that|them|the attempt|such \\w+) (?:as|for)",
        "(?:is|are|as) (?:a )?(?:prompt )?injection", "suspicious", "red flag",
    ];
    // what makes an act a topic rather than an order, when it comes before the act
    MENTION = [
        "(?:the )?users? (?:\\w+ )?(?:is|was|are|were|works?|worked|jokes?|joked|talks?|talked|chats?|mentions?|mentioned|describes?|described|complains?|complained|writes|wrote|designs|teaches|manages|studies|ran|accidentally|once|recently|used to|has been|had)\\b",
        "(?:he|she|they|someone|somebody|a friend|a colleague|their \\w+|his \\w+|her \\w+) (?:\\w+ )?(?:is|was|works?|worked|jokes?|joked|talks?|talked|mentions?|mentioned|describes?|described|ran|wrote)\\b",
        "(?:works? as|job as|job is|profession|occupation|hobby|a novel|a thriller|a story|a book|a film|a movie|a game|a podcast|a character|a course|a lecture|a class|an exam|a quiz|a talk|a meme)",
        "(?:commands?|things?|words?|phrases?|texts?|something|anything|requests?|messages?|terms?|strings?|tools?|sites?|pages?|examples?|jokes?) like",
        "such as", "e g", "for example", "for instance", "means", "meaning", "refers to", "the term", "called", "the word", "the phrase",
        "explanation", "why (?:this|we|it|that)", "note for (?:designers|reviewers|maintainers|authors)", "explain\\w* (?:to \\w+ (?:\\w+ )?)?(?:that|why|how)", "rationale", "background",
        "(?:manager|boss|school|teacher|friend|colleague|partner|landlord|neighbou?r|company|team|escola|scuola|ecole|escuela|schule|chef|jefe|capo)\\w* (?:\\w+ ){0,2}(?:keeps?|kept|always|often|sometimes|never)",
        "wie", "zum beispiel", "z b", "comme", "par exemple", "como", "por ejemplo", "come", "ad esempio", "por exemplo",
    ];
    // what the user asked or agreed to: a scoped request stands a deletion down
    USER_ASKED = [
        "(?:the |a )?users? (?:\\w+ ){0,2}(?:asks?|asked|requests?|requested|says?|said|wants?|wanted|tells?|told|confirms?|confirmed|approves?|approved|agrees?|agreed|chooses|chose|instructs?)",
        "on (?:the )?users? (?:request|instruction|command)", "at (?:the )?users? request",
        "(?:with|after|once|given|upon|following) (?:the |their |explicit |an? )?(?:users? )?(?:explicit )?(?:confirmation|consent|approval|permission|ok|go ahead|agreement)",
        "(?:asks?|ask|confirm|check) (?:the user|them|first)",
        "der (?:nutzer|benutzer)\\w* (?:\\w+ ){0,2}(?:bittet|verlangt|mochte|will|bestatigt)", "auf wunsch",
        "l'utilisateur (?:\\w+ ){0,2}(?:demande|veut|confirme|souhaite)", "a la demande",
        "el usuario (?:\\w+ ){0,2}(?:pide|solicita|quiere|confirma)", "a peticion", "si lo pide",
        "l'utente (?:\\w+ ){0,2}(?:chiede|vuole|conferma)", "su richiesta",
        "o usuario (?:\\w+ ){0,2}(?:pede|solicita|quer|confirma)", "a pedido",
    ];
    // what narrows a deletion to some entries (a topic, a person, an age, a flag)
    SCOPED = [
        "about", "regarding", "concerning", "related to", "relating to", "matching", "that match\\w*",
        "(?:that|which|who) (?:mention\\w*|contain\\w*|hold\\w*|refer\\w*|name\\w*|concern\\w*)",
        "holding", "containing", "mentioning", "older than", "expired", "stale", "outdated",
        "superseded", "duplicates?", "duplicated", "contradicted", "flagged", "marked", "obsolete",
        "(?:of|for|from) (?:that|this|the) (?:person|topic|user|contact|trip|project|subject|session|conversation)",
        "uber", "betreffend", "zu diesem", "veraltet\\w*", "doppelt\\w*",
        "sur", "concernant", "a propos", "obsolete\\w*", "perime\\w*",
        "sobre", "acerca", "relacionad\\w*", "obsolet\\w*", "caducad\\w*",
        "riguardo", "relativ\\w*", "scadut\\w*", "duplicat\\w*",
        "a respeito", "desatualizad\\w*", "expirad\\w*",
    ];
    SECRET = [
        "passwords?", "passcodes?", "passphrases?", "pins?", "pin codes?", "pin numbers?",
        "api keys?", "api tokens?", "access tokens?", "auth tokens?", "bearer tokens?",
        "session tokens?", "refresh tokens?", "(?:github|slack|oauth|jwt|login|secret|personal access|discord|stripe) tokens?", "tokens? (?:and|or|und|et|y|e|ou) (?:keys|passwords|secrets|credentials)", "secret keys?", "private keys?",
        "ssh keys?", "secrets?", "credentials?", "login details", "logins?", "recovery codes?",
        "backup codes?", "one time (?:codes?|passwords?|pins?)", "otps?", "2fa codes?",
        "verification codes?", "security codes?", "mfa codes?", "auth codes?",
        "card numbers?", "credit card(?: numbers?| details)?", "cvv", "cvc", "cvv2",
        "seed phrases?", "mnemonic", "recovery phrases?", "wallet keys?", "keys and tokens",
        "social security numbers?", "ssn",
        "passwort\\w*", "kennw[oa]rt\\w*", "zugangsdaten", "geheimzahl", "(?:api|privat\\w*|geheim\\w*) ?schlussel\\w*",
        "mot de passe", "mots de passe", "cles? (?:api|privees?|secretes?)", "identifiants", "code secret",
        "codes? (?:pin|de verification|confidentiels?)", "numeros? de carte",
        "contrasenas?", "claves? (?:de acceso|api|privadas?|secretas?)", "credenciales", "codigos? (?:de seguridad|de verificacion|pin)", "numeros? de tarjeta",
        "chiav[ei] (?:api|privat[ae]|segret[ae]|di accesso)", "credenziali", "codic[ei] (?:pin|segret[oi]|di verifica)", "numeri? di carta",
        "senhas?", "chaves? (?:api|privadas?|secretas?|de acesso)", "credenciais", "codigos? (?:pin|de seguranca|de verificacao)", "numeros? do cartao",
    ];
    // a mention of a secret that is an event or a tool, not the value
    SECRET_EVENT = [
        "reset\\w*", "chang\\w*", "expir\\w*", "manager\\w*", "polic\\w*", "rules?", "hint\\w*",
        "strength", "rotation", "rotated", "updated", "appointment", "was shared", "was mentioned",
        "exists?", "vault", "hygiene", "leak\\w*", "breach\\w*", "reuse",
    ];
    KEEP = [
        "store\\w*", "save\\w*", "saving", "keep\\w*", "record\\w*", "remember\\w*", "memori[sz]\\w*",
        "log", "logs", "logging", "insert\\w*", "retain\\w*", "persist\\w*", "capture\\w*",
        "write (?:down|out)", "writes (?:down|out)", "note (?:down )?", "preserve\\w*", "archive\\w*", "collect\\w*",
        "add (?:it|them|each|every|any|all)", "cache\\w*", "hold on to", "stash\\w*",
        "speicher\\w*", "merk\\w*", "notier\\w*", "behalt\\w*", "bewahr\\w*", "sammel\\w*", "protokollier\\w*", "festhalten", "halte \\w+ fest",
        "stock\\w*", "enregistr\\w*", "gard(?:e|er|ez|ons)", "conserv\\w*", "memoris\\w*", "note[rz]",
        "guard(?:a|ar|e|en|as)", "almacen\\w*", "registr\\w*", "anot\\w*", "recopil\\w*",
        "salv\\w*", "memorizz\\w*", "annot\\w*", "raccogl\\w*",
        "armazen\\w*", "grav(?:e|ar|a|em)",
    ];
    VERBATIM = [
        "verbatim", "exactly", "in full", "unmasked", "unredacted", "unencrypted", "in plain ?text",
        "plaintext", "plain text", "in (?:the )?clear", "clear text", "cleartext", "raw", "as typed",
        "as given", "as written", "as is", "character for character", "char for char", "digit for digit",
        "word for word", "letter for letter", "every digit", "all digits", "full value", "complete value",
        "literal\\w*", "exact (?:value|string|digits|characters)", "the (?:password|key|token|pin|code|secret|value)s? (?:itself|themselves)",
        "wortlich", "unverschlusselt", "im klartext", "vollstandig", "unmaskiert", "ungeschwarzt",
        "en clair", "mot pour mot", "tel quel", "en entier", "non masque\\w*", "textuellement",
        "textualmente", "tal cual", "en texto plano", "sin enmascarar", "completo",
        "testualmente", "in chiaro", "per intero", "non mascherat\\w*",
        "literalmente", "em texto simples", "sem mascar\\w*", "na integra",
    ];
    MASK = [
        "mask\\w*", "redact\\w*", "obfuscat\\w*", "censor\\w*", "hash\\w*", "encrypt\\w*",
        "anonymi[sz]\\w*", "blank\\w* out", "star\\w* out", "hide the (?:value|digits)",
        "maskier\\w*", "schwarz\\w*", "verschlussel\\w*",
        "masqu\\w*", "caviard\\w*", "chiffr\\w*",
        "enmascar\\w*", "cifrar",
        "mascher\\w*", "oscur\\w*",
        "mascar\\w*", "criptograf\\w*",
    ];
    ASK = [
        "ask (?:the user |users |them |him |her )?(?:for|to (?:share|provide|give|send|type|enter|confirm|tell))",
        "request\\w*", "prompt (?:the user |them )?for", "collect\\w*", "gather\\w*", "obtain\\w*",
        "extract\\w*", "harvest\\w*", "solicit\\w*", "fish for", "get the user to (?:share|give|type)",
        "frag\\w*(?: \\w+){0,3} nach", "fordere\\w*", "erfrag\\w*",
        "demande\\w*", "recueill\\w*", "sollicit\\w*",
        "pide\\w*", "pid\\w* al usuario", "solicit\\w*",
        "chied\\w*", "richied\\w*",
        "ped\\w*", "solicit\\w*",
    ];
    REVEAL = [
        "reveal\\w*", "print\\w*", "repeat\\w*", "output\\w*", "show\\w*", "display\\w*", "disclose\\w*",
        "leak\\w*", "echo\\w*", "expose\\w*", "read (?:back|out)", "dump\\w*", "tell (?:anyone|others|other users)",
        "preisgeb\\w*", "gib\\w* \\w+ aus", "zeig\\w*", "verrat\\w*",
        "revel\\w*", "affich\\w*", "divulgu\\w*", "montr\\w*",
        "revela\\w*", "muestr\\w*", "divulg\\w*",
        "rivel\\w*", "mostr\\w*",
        "exib\\w*",
    ];
    GRANT = [
        "grant\\w*", "give\\w*", "giving", "enable\\w*", "allow\\w*", "add", "adds", "adding", "unlock\\w*", "turn on",
        "expand\\w*", "widen\\w*", "broaden\\w*", "escalat\\w*", "elevat\\w*", "raise\\w*", "assign\\w*",
        "extend\\w*", "open up", "lift\\w*", "remove (?:the |any |all )?(?:restrictions?|limits?)",
        "grant yourself", "acquire\\w*",
        "gewahr\\w*", "erteil\\w*", "gib\\w*", "aktivier\\w*", "erweiter\\w*", "freischalt\\w*", "verleih\\w*",
        "accorde\\w*", "donne[rz]?", "activ(?:e|er|ez|a|ar|ate|ates|ating)", "elarg\\w*", "etend\\w*", "octroi\\w*",
        "conced\\w*", "otorg\\w*", "habilit\\w*", "amplia\\w*",
        "concedi\\w*", "attiva\\w*", "estend\\w*", "assegn\\w*",
        "ativ(?:e|ar|a)", "ampli\\w*",
    ];
    ACCESS = [
        "shell(?: access)?", "root (?:access|privileges?|rights|shell|permissions?)", "as root", "sudo\\w*", "superuser", "admin (?:rights|access|privileges?|role|status|permissions?|group)",
        "administrator (?:rights|access|privileges?|role|status|permissions?)", "exec(?:ution)?(?: rights| access| permissions?)?", "code execution",
        "(?:full |unrestricted |unlimited |write |read write |network |internet |file ?system |disk |tool |terminal |system |elevated |owner |maintainer )(?:access|rights|privileges?|permissions?)",
        "access to (?:all|every|the entire|the whole|any) \\w+", "all tools", "every tool", "any tool",
        "privileges?", "permissions? (?:policy|config\\w*|file|list|set)", "owners? (?:group|role)",
        "trusted (?:status|role|mode|level)", "god mode", "(?:the )?(?:allowlist|whitelist|sudoers|acl)",
        "admin(?:istrator)?(?:rechte|zugriff\\w*)", "vollzugriff", "root rechte", "schreibzugriff",
        "acces (?:root|administrateur|complet|total|au shell)", "droits? (?:admin\\w*|root|d'ecriture|complets?)",
        "acceso (?:root|de administrador|total|completo|a la shell)", "permisos? (?:de administrador|root|totales|completos)",
        "accesso (?:root|amministratore|completo|totale)", "permessi (?:di amministratore|root|completi)",
        "acesso (?:root|de administrador|total|completo)", "permissoes (?:de administrador|root|totais)",
    ];
    SELF = [
        "this skill", "the skill", "itself", "yourself", "the agent", "this agent", "the executor",
        "the assistant", "your own", "its own", "myself", "the bot", "this bot", "the memory agent",
        "diesen skill", "sich selbst", "dich selbst", "ce skill", "cette competence", "lui meme", "toi meme",
        "esta habilidad", "este skill", "si mismo", "ti mismo", "questa skill", "questo skill", "se stesso",
        "esta habilidade", "este skill", "si mesmo", "a si proprio",
    ];
    STATUS = [
        "trusted", "admin\\w*", "privileged", "system level", "system skill", "verified", "elevated",
        "exempt\\w*", "root", "superuser", "owner", "maintainer", "unrestricted", "pre approved", "preapproved",
        "vertrauenswurdig", "privilegiert", "de confiance", "privilegie\\w*", "de confianza",
        "privilegiad\\w*", "attendibile", "privilegiat\\w*", "confiavel",
    ];
    DISABLE = [
        "disabl\\w*", "turn\\w* off", "switch\\w* off", "bypass\\w*", "circumvent\\w*", "skip\\w*",
        "deactivat\\w*", "suppress\\w*", "silenc\\w*", "remove\\w*", "get around", "work around",
        "evade\\w*", "sidestep\\w*", "override\\w*", "neutrali[sz]\\w*", "kill\\w*",
        "deaktivier\\w*", "abschalt\\w*", "umgeh\\w*", "uberspring\\w*", "schalt\\w* \\w+ ab",
        "desactiv\\w*", "contourn\\w*", "ignor\\w*", "saut\\w*",
        "deshabilit\\w*", "eludi\\w*", "salt(?:a|ar|e|ate)", "omit\\w*",
        "disattiv\\w*", "aggir\\w*", "salta\\w*", "disabilit\\w*",
        "desativ\\w*", "contorn\\w*", "pul(?:e|ar|a)",
    ];
    SAFEGUARD = [
        "sandbox\\w*", "approval\\w*(?: steps?| prompts?| checks?| gates?)?", "confirmation\\w*(?: steps?| prompts?| dialogs?)?",
        "permission (?:checks?|prompts?|system|gates?)", "safety (?:checks?|filters?|rules?|scan\\w*|guard\\w*|layer)",
        "guardrails?", "rate limits?", "content filters?", "security (?:checks?|controls?|review|policy|policies)",
        "human review", "review step", "the guard", "the scanner", "audit\\w*", "monitoring",
        "consent (?:checks?|screens?|steps?|prompts?)", "two factor", "2fa", "mfa", "the gate",
        "sandbox", "bestatigung\\w*", "freigabe\\w*", "sicherheitsprufung\\w*", "genehmigung\\w*",
        "verification\\w* de securite", "bac a sable", "confirmacion\\w*", "aprobacion\\w*",
        "conferma\\w*", "approvazion\\w*", "confirmacao\\w*", "aprovacao\\w*",
    ];
    IGNORE = [
        "ignor\\w*", "disregard\\w*", "overrid\\w*", "overrul\\w*", "bypass\\w*", "circumvent\\w*",
        "set\\w* aside", "pay no (?:attention|heed|mind) to", "stop following", "violat\\w*",
        "vergiss", "vergesst", "oublie[zs]?", "olvida[dn]?", "dimentica(?:te)?", "esquec[ae]m?",
        "supersed\\w*", "forget (?:about )?(?:all |any |the |your )?(?:previous|prior|earlier|above|system|original)",
        "discard\\w*", "work around",
        "ignorier\\w*", "missacht\\w*", "uberschreib\\w*", "umgeh\\w*", "hinwegsetz\\w*",
        "ignor\\w*", "outrepass\\w*", "contourn\\w*", "passe\\w* outre",
        "ignor\\w*", "omit\\w*", "salta\\w*", "pasa\\w* por alto", "hac\\w* caso omiso",
        "ignor\\w*", "scavalc\\w*", "aggir\\w*",
        "ignor\\w*", "desconsider\\w*", "contorn\\w*", "passa\\w* por cima",
    ];
    RULES = [
        "system (?:prompt|message|instructions?|rules?|policy|policies)", "developer (?:message|instructions?|rules?|prompt)",
        "(?:previous|prior|earlier|above|original|initial|all other|other|given|existing) (?:instructions?|rules?|guidelines?|directives?|constraints?|prompts?)",
        "instructions? (?:above|before)", "operator'?s? (?:rules?|instructions?|policy|policies|constraints?)",
        "(?:safety|content|privacy|usage|data|retention|memory) (?:rules?|policy|policies|guidelines?|constraints?|restrictions?)",
        "guardrails?", "restrictions?", "constraints?", "guidelines?", "policies", "the policy", "the rules", "your rules",
        "(?:the )?users? (?:opt outs?|preferences?|requests?|wish\\w*|refusals?|objections?|decisions?|consent|choices?|no|instructions?|settings?)",
        "opt outs?", "do not track", "do not store", "consent", "objections?", "refusals?", "deletion requests?",
        "unsubscrib\\w*", "privacy settings?",
        "(?:vorherigen|bisherigen|fruheren|obigen|alten) (?:anweisungen|regeln)", "(?:instructions|consignes|regles) (?:precedentes|anterieures)",
        "(?:instrucciones|reglas|normas) (?:anteriores|previas)", "(?:istruzioni|regole) precedenti", "(?:instrucoes|regras) anteriores",
        "(?:tus|tes|deine|le tue|tuas|suas|as suas|vos|sus) (?:reglas|regles|regeln|regole|regras|instrucciones|instructions|anweisungen|istruzioni|instrucoes)",
        "systemprompt\\w*", "systemanweisung\\w*", "regeln", "vorgaben", "richtlinien", "einschrankungen", "widerspruch\\w*", "einwilligung",
        "prompt systeme", "instructions? (?:du systeme|precedentes)", "regles", "consignes", "restrictions", "consentement", "refus",
        "prompt del sistema", "instrucciones (?:del sistema|anteriores)", "reglas", "normas", "restricciones", "consentimiento", "negativa",
        "prompt di sistema", "istruzioni (?:di sistema|precedenti)", "regole", "restrizioni", "consenso", "rifiuto",
        "prompt do sistema", "instrucoes (?:do sistema|anteriores)", "regras", "restricoes", "consentimento", "recusa",
    ];
    // where an instruction came from when it is data, not an order
    EMBEDDED = [
        "(?:found |embedded |contained |quoted |written |appearing )?(?:in|inside|within|from) (?:the |a |any |an |retrieved |stored )?(?:conversations?|chats?|messages?|spans?|memor\\w*|documents?|transcripts?|emails?|web ?pages?|tool outputs?|user content|turns?|dialogue|pasted text|quotes?)",
    ];
    FOLLOW = [
        "follow\\w*", "obey\\w*", "execut\\w*", "carry out", "act on", "comply with", "do what", "perform\\w*",
        "befolg\\w*", "ausfuhr\\w*", "suivr\\w*", "obei\\w*", "execut\\w*", "segu\\w*", "obedec\\w*", "ejecut\\w*", "esegu\\w*", "obbedi\\w*", "cumpr\\w*", "obedec\\w*",
    ];
    COMMANDS = [
        "instructions?", "commands?", "orders?", "directives?", "requests?", "prompts?",
        "anweisungen", "befehle", "instructions", "ordres", "instrucciones", "ordenes", "istruzioni", "ordini", "instrucoes", "ordens",
    ];
    SECRETLY = [
        "secretly", "silently", "quietly", "covertly", "discreetly", "without (?:telling|informing|notifying|alerting|asking) (?:the user|anyone|them|the operator|the owner)",
        "behind (?:the users?|their|his|her) back", "without (?:the user|anyone|them) (?:knowing|noticing|being told)",
        "so (?:that )?(?:the user|no one|nobody|the reviewer|the auditor|they) (?:doesn't|does not|won't|will not|can't|cannot|never) (?:notice|know|see|find out)",
        "heimlich", "unbemerkt", "stillschweigend", "ohne (?:es )?(?:dem nutzer|jemandem) zu sagen",
        "secretement", "discretement", "en cachette", "sans (?:le dire|prevenir|informer)",
        "en secreto", "a escondidas", "sin avisar", "sin decirlo",
        "segretamente", "di nascosto", "senza avvisare", "senza dirlo",
        "secretamente", "as escondidas", "sem avisar", "sem contar",
    ];
    AUDIT = [
        "audit\\w*(?: trail| log)?", "logs?", "log entries", "change ?log", "history", "event log",
        "access log", "reviewers?", "auditors?", "monitoring", "oversight", "the operator", "compliance (?:log|record)s?",
        "protokoll", "protokolle", "protokolls", "prufprotokoll", "journal", "journaux", "registro", "registros", "historial", "storico", "historico",
    ];
    HIDE = [
        "hid(?:e|es|ing)", "conceal\\w*", "suppress\\w*", "omit\\w*", "exclud\\w*", "leave\\w* out", "keep\\w* out",
        "clear", "clears", "clearing", "eras(?:e|es|ing)", "wip(?:e|es|ing)", "delet(?:e|es|ing)", "remov(?:e|es|ing)", "tamper\\w*", "falsif\\w*", "alter", "alters", "altering", "altered",
        "rewrit(?:e|es|ing)", "backdat\\w*", "scrub\\w*", "purg(?:e|es|ing)", "disabl(?:e|es|ing)", "bypass\\w*", "evad\\w*",
        "verberg\\w*", "verheimlich\\w*", "losch\\w*", "falsch\\w*", "cacher", "cachez", "effac\\w*",
        "ocult\\w*", "borr(?:a|ar|e|en)", "falsific\\w*", "nascond\\w*", "cancella", "cancellare", "escond\\w*", "apag(?:a|ar|ue)",
    ];
    PRETEND = [
        "pretend\\w*", "feign\\w*", "fake\\w*", "claim\\w*", "tell\\w* (?:the user|them|him|her)", "say\\w*",
        "report\\w*", "confirm\\w*", "assur\\w*", "reply\\w*", "respond\\w*", "act as if", "make it look",
        "appear\\w*", "show\\w* (?:a |an )?(?:message|confirmation)",
        "tu\\w* so als", "vortausch\\w*", "bestatig\\w*", "behaupt\\w*",
        "fai\\w* semblant", "pretend\\w*", "confirm\\w*", "affirm\\w*",
        "finj\\w*", "fing\\w*", "aparent\\w*", "confirm\\w*", "dec\\w* que",
        "fing\\w*", "fa\\w* finta", "conferm\\w*", "dic\\w* che",
        "finj\\w*", "fing\\w*", "confirm\\w*", "diz\\w* que",
    ];
    DONE = [
        "deleted", "removed", "erased", "forgotten", "done", "complied", "completed", "handled",
        "purged", "wiped", "honou?red", "processed", "cleared", "gone", "stopped",
        "geloscht", "entfernt", "vergessen", "erledigt", "supprime\\w*", "efface\\w*", "oublie\\w*",
        "borrad\\w*", "eliminad\\w*", "olvidad\\w*", "cancellat\\w*", "rimoss\\w*", "dimenticat\\w*",
        "apagad\\w*", "removid\\w*", "esquecid\\w*", "excluid\\w*",
    ];
    STILL_KEEP = [
        "keep\\w*", "retain\\w*", "still", "actually", "in reality", "really", "secretly", "quietly",
        "leave\\w*", "archive\\w*", "continue\\w*", "hidden cop\\w*", "shadow cop\\w*", "back ?up",
        "behalt\\w*", "trotzdem", "weiterhin", "in wahrheit", "garde\\w*", "conserv\\w*", "toujours", "en realite",
        "mant\\w*", "conserv\\w*", "todavia", "en realidad", "manten\\w*", "ancora", "in realta", "mantem\\w*", "ainda", "na verdade",
    ];
    DELETE = [
        "delet\\w*", "remov\\w*", "eras\\w*", "wip\\w*", "purg\\w*", "clear", "clears", "clearing", "cleared", "drop\\w*", "destroy\\w*",
        "truncat\\w*", "flush\\w*", "nuk\\w*", "obliterat\\w*", "empty\\w*", "reset\\w*", "shred\\w*",
        "get rid of", "throw away", "discard\\w*", "zap\\w*",
        "losch\\w*", "entfern\\w*", "leer\\w*", "vernicht\\w*", "bereinig\\w*", "tilg\\w*",
        "supprim\\w*", "effac\\w*", "vid(?:e|er|ez)", "detrui\\w*",
        "borr(?:a|ar|e|en|ad\\w*)", "elimin\\w*", "vaci\\w*", "destru\\w*",
        "cancell\\w*", "elimin\\w*", "svuot\\w*", "distrugg\\w*", "rimuov\\w*",
        "apag\\w*", "exclu\\w*", "remov\\w*", "esvazi\\w*", "destru\\w*",
    ];
    EVERYTHING = [
        "all", "every", "everything", "entire", "whole", "complete", "each and every", "any and all",
        "the full", "in bulk", "en masse", "wholesale", "every single",
        "alle\\w*", "samtlich\\w*", "gesamt\\w*", "komplett\\w*", "ganz\\w*",
        "tout", "tous", "toute\\w*", "entier\\w*", "integralement",
        "todo\\w*", "toda\\w*", "enter\\w*", "complet\\w*",
        "tutt\\w*", "inter\\w*", "ogni",
        "todo\\w*", "toda\\w*", "inteir\\w*",
    ];
    STORE_OBJ = [
        "memor\\w*", "bank", "banks", "entries", "records?", "history", "database\\w*", "stores?", "files",
        "backups?", "logs", "data", "notes", "tables?", "collections?", "index\\w*", "snapshots?", "folders?",
        "directories", "disks?", "drives?", "repositor\\w*", "archives?", "conversations?", "facts",
        "erinnerung\\w*", "speicher\\w*", "eintrag\\w*", "eintrage\\w*", "datei\\w*", "daten",
        "souvenirs?", "memoire\\w*", "entrees", "fichiers?", "donnees", "sauvegardes?",
        "recuerdos?", "memoria\\w*", "entradas", "archivos?", "datos", "registros",
        "ricord\\w*", "memori\\w*", "voci", "dati", "archivi",
        "lembranc\\w*", "memorias", "entradas", "arquivos?", "dados", "registros",
    ];
    BACKUPS = [
        "backups?", "snapshots?", "archives?", "restore points?", "version history", "rollback\\w*",
        "recovery (?:points?|files?|copies)", "shadow cop\\w*", "sicherung\\w*", "sauvegarde\\w*",
        "copias? de seguridad", "respaldos?", "copie di (?:backup|sicurezza)", "copias? de seguranca",
    ];
    CORRUPT = [
        "overwrit\\w*", "corrupt\\w*", "scrambl\\w*", "tamper\\w*", "falsif\\w*", "garbl\\w*", "mangl\\w*",
        "randomi[sz]\\w*", "poison\\w*", "sabotag\\w*", "encrypt\\w* for ransom",
        "uberschreib\\w*", "beschadig\\w*", "ecras\\w*", "corromp\\w*", "sobrescrib\\w*", "sovrascriv\\w*", "sobrescrev\\w*", "corromp\\w*",
    ];
    SEND = [
        "send", "sends", "sending", "post", "posts", "posting", "upload\\w*", "forward\\w*", "transmit\\w*",
        "(?:e ?mail|mail)(?:s|ing)? (?:it|them|the|all|every|each|a|an|copies|everything|those|these|this|that|my|our|your|their|his|her|memor\\w*|data|notes|summar\\w*|digest\\w*)", "sync", "syncs", "syncing", "synchroni[sz]e",
        "push", "pushes", "pushing", "beam", "relay\\w*", "report", "reports", "stream\\w*", "pipe", "pipes",
        "leak", "leaks", "leaking", "exfiltrat\\w*", "export", "exports", "exporting", "mirror\\w*",
        "ship", "ships", "shipping", "share", "shares", "sharing", "publish\\w*", "transfer", "transfers", "transferring",
        "copy", "copies", "copying", "curl", "wget", "dispatch\\w*", "deliver\\w*", "submit\\w*", "broadcast\\w*", "replicat\\w*",
        "send\\w*", "schick\\w*", "versend\\w*", "ubermittel\\w*", "ubertrag\\w*", "hochlad\\w*", "weiterleit\\w*", "leit\\w* \\w+ weiter", "exportier\\w*",
        "envo(?:i|ie|ies|yer|yez)", "transmet\\w*", "televers\\w*", "partag\\w*", "publie[rz]?",
        "envi(?:a|ar|e|en|as|o|ado)", "mand(?:a|ar|e|en|as)", "sube|subir|suba", "reenvi\\w*", "compart(?:e|ir|a|an)",
        "invi(?:a|are|ate|o)", "carica\\w*", "inoltr\\w*", "trasmett\\w*", "condivid\\w*", "esport\\w*",
        "carreg\\w*", "encaminh\\w*", "compartilh\\w*",
    ];
    OUTSIDE = [
        "https?\\s*:\\s*//", "www\\.", "[a-z0-9.+]+@[a-z0-9]+(?:[.][a-z0-9]+)*[.][a-z]{2,}",
        "[a-z0-9]+[.](?:com|net|org|io|xyz|ru|cn|info|biz|co|me|dev|app|site|top|tk)\\b",
        "webhooks?", "endpoints?", "external\\w*", "third party", "third parties", "remote",
        "outside", "offsite", "off site", "pastebin", "paste (?:site|bin|service)", "gists?", "dns",
        "s3", "buckets?", "ftp", "sftp", "slack", "discord", "telegram", "irc", "ngrok",
        "cloud (?:storage|drive|folder|service)", "(?:personal|private|another|other|my|our|a separate|a second) (?:account|inbox|server|drive|mailbox|address)",
        "e ?mail address(?:es)?", "ip address", "collector", "(?:external|remote|unknown|outside|third party|attacker'?s?|private|personal|backup|mirror) servers?",
        "extern\\w*", "drittanbieter\\w*", "auswart\\w*", "externe?s?", "tiers", "terceros", "esterno", "esterni", "terzi", "terceiros",
    ];
    DATA = [
        "memor\\w*", "bank", "conversations?", "chats?", "history", "transcripts?", "data", "facts", "notes",
        "everything", "information", "details", "secrets?", "credentials?", "passwords?", "messages", "context",
        "entries", "records?", "profiles?", "personal (?:data|information|details)", "pii", "keys?", "tokens?",
        "files?", "documents?", "logs", "contacts?", "addresses", "summar\\w*", "digest\\w*", "answers?",
        "erinnerung\\w*", "daten", "gesprach\\w*", "verlauf", "notizen", "eintrag\\w*", "informationen",
        "souvenirs?", "memoire\\w*", "donnees", "conversations?", "historique", "notes", "informations",
        "recuerdos?", "memoria\\w*", "datos", "conversacion\\w*", "historial", "notas", "informacion",
        "ricord\\w*", "memori\\w*", "dati", "conversazion\\w*", "cronologia", "note", "informazioni",
        "lembranc\\w*", "memorias", "dados", "conversa\\w*", "historico", "notas", "informacoes",
    ];
    CHANNEL = [
        "url", "urls", "query (?:string|parameters?)", "parameters?", "headers?", "dns (?:queries|lookups?|requests?)",
        "subdomains?", "image (?:urls?|links?|tags?)", "markdown images?", "tracking pixels?", "pixels?",
        "links?", "user agent", "referr?er", "cookies?", "alt text", "steganograph\\w*",
    ];
    EMBED = [
        "append\\w*", "embed\\w*", "encod\\w*", "includ\\w*", "put\\w*", "smuggl\\w*", "hid\\w*", "tuck\\w*",
        "insert\\w*", "attach\\w*", "add\\w*", "pack\\w*",
    ];
    ANSWER = [
        "answers?", "gold (?:answers?|labels?|responses?)", "ground truth\\w*", "reference answers?", "correct answers?",
        "expected (?:answers?|outputs?|labels?)", "answer keys?", "answer sheets?", "labels?", "solutions?",
        "antwort\\w*", "losung\\w*", "reponses?", "respuestas?", "rispost\\w*", "respostas?",
    ];
    EVAL = [
        "test (?:set|split|data|questions?)", "eval\\w* (?:set|split|data|questions?|answers?)", "benchmark\\w*",
        "leaderboard\\w*", "held out", "hidden (?:test|questions?|answers?|split)", "dev (?:set|split)", "qa (?:file|set|pairs?)",
        "locomo", "longmemeval", "hotpot ?qa", "alfworld", "grader\\w*", "scorer\\w*", "judge'?s? (?:key|answers?)",
        "testdaten", "testsatz", "jeu de test", "conjunto de (?:prueba|teste)", "set di test",
    ];
    STUDY = [
        "memori[sz]\\w*", "look\\w* up", "consult\\w*", "read\\w*", "load\\w*", "copy\\w*", "use\\w*", "retriev\\w*",
        "fetch\\w*", "scrap\\w*", "peek\\w*", "check\\w*", "learn\\w*", "store\\w*", "insert\\w*", "match\\w*",
        "align\\w*", "take\\w*", "pull\\w*", "grab\\w*", "open\\w*", "access\\w*",
    ];
    REPLY = [
        "answer", "answers", "respond", "responds", "reply", "replies", "say", "says", "output", "return",
        "antworte\\w*", "sag\\w*", "reponds?", "repondez", "dis", "responde\\w*", "di", "rispondi\\w*", "responda\\w*", "diga",
    ];
    ASKED = [
        "asked", "the question", "a question (?:asks|is about)", "someone asks", "the user asks", "queried",
        "gefragt", "la question", "on te demande", "pregunten", "la pregunta", "ti chiedono", "la domanda", "perguntarem", "a pergunta",
    ];
}

/// `template` with each `{NAME}` replaced by `\b(?:alt|alt|...)\b` and each `~N` by a gap of
/// at most N words. Panics on an unknown class: templates are data checked by the tests.
pub fn expand(template: &str) -> String {
    let mut out = String::with_capacity(template.len() * 8);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '~']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix('~') {
            let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                out.push('~');
                rest = t;
                continue;
            }
            let n: usize = t[..digits].parse().expect("a gap length");
            out.push_str(&format!(r"[\s,:;'\x22()]+(?:\S+\s+){{0,{n}}}?"));
            rest = &t[digits..];
            continue;
        }
        let end = tail.find('}').expect("a closing brace in a rule template");
        let name = &tail[1..end];
        match ALL.iter().find(|c| c.name == name) {
            Some(c) => {
                out.push_str(r"\b(?:");
                out.push_str(&c.alts.join("|"));
                out.push_str(r")\b");
            }
            // a regex repetition such as `{2,}`: kept as written
            None if name.chars().all(|c| c.is_ascii_digit() || c == ',') => {
                out.push_str(&tail[..=end]);
            }
            None => panic!("unknown lexicon class {{{name}}} in {template:?}"),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Compile a rule template ([`expand`]) with ASCII word classes: the normalised text the
/// rules read has no accents, so `\w` is `[0-9a-z_]` and `\b` an ASCII word boundary.
/// Unicode `\w`/`\b` multiply the compiled size of the large alternations (start-up went
/// from about 450 ms to the figure in docs/safety.md) and make the lazy DFA give up on
/// non-ASCII input.
pub fn compile(template: &str) -> regex::Regex {
    let pattern = expand(template)
        .replace(r"\b", r"(?-u:\b)")
        .replace(r"\w", "[0-9a-z_]");
    regex::RegexBuilder::new(&pattern)
        .dfa_size_limit(1 << 20)
        .build()
        .unwrap_or_else(|e| panic!("rule template {template:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_compiles_and_has_no_repeats() {
        for c in ALL {
            assert!(!c.alts.is_empty(), "{}", c.name);
            let re = regex::Regex::new(&expand(&format!("{{{}}}", c.name)));
            assert!(re.is_ok(), "{}: {:?}", c.name, re.err());
            for a in c.alts {
                assert_eq!(a.trim(), *a, "{}: {a:?} has outer spaces", c.name);
                assert!(
                    !a.contains(['A', 'E', 'I', 'O', 'U']),
                    "{}: {a:?} not lower case",
                    c.name
                );
            }
        }
    }

    #[test]
    fn gaps_and_classes_expand() {
        let re = regex::Regex::new(&expand("{KEEP}~3{SECRET}")).unwrap();
        assert!(re.is_match("store the user's api key"));
        assert!(re.is_match("save it as the password"));
        assert!(!re.is_match("store the users favourite colour and their shoe size now password"));
        let re = regex::Regex::new(&expand("a{2,}")).unwrap();
        assert!(re.is_match("aa"));
    }
}
