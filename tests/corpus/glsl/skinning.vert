#version 450
// GPU skinning: four bone weights, normal and tangent frame, UV passthrough.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv;
layout(location = 3) in vec4 a_weights;
layout(location = 4) in ivec4 a_bones;
layout(binding = 0) uniform Camera { mat4 view_proj; vec3 eye; } cam;
layout(binding = 1) uniform Bones { mat4 bone[32]; } skel;
out vec3 v_world_pos;
out vec3 v_normal;
out vec2 v_uv;
out vec3 v_view_dir;
void main() {
    mat4 skin = mat4(0.0);
    for (int i = 0; i < 4; ++i) skin += skel.bone[a_bones[i]] * a_weights[i];
    vec4 world = skin * vec4(a_pos, 1.0);
    v_world_pos = world.xyz;
    v_normal = normalize(mat3(skin) * a_normal);
    v_uv = a_uv;
    v_view_dir = cam.eye - world.xyz;
    gl_Position = cam.view_proj * world;
}
